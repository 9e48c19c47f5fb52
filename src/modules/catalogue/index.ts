/** The catalogue (docs/api.md): the honeypot kinds a node can install, read from the built-in catalogue. */
import type { Feature } from "../../core/context";
import { catalogueApi } from "./routes";

export { CatalogueKind } from "./schemas";

export function catalogueFeature(): Feature {
  return { name: "catalogue", routes: catalogueApi() };
}
