/**
 * The first import of main.ts: modules run in import order, so a process that must start again
 * with Bun's settings (runtime-env.ts) does so before the others are loaded and run for nothing.
 */
import { execWithRuntimeEnv } from "./runtime-env";

execWithRuntimeEnv();
