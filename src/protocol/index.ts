export * from "./json";
export * from "./framing";
export * from "./messages";
export * from "./types";
export * from "./classify";
