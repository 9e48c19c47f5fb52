/**
 * Where this package lives on disk. Found relative to this file (not the working directory), so
 * `honeybee node` started from anywhere finds its built-in catalogue and the `${HONEYBEE_HOME}`
 * that manifests refer to.
 */
import { join } from "node:path";

/** The package root: the folder that holds package.json, src/ and catalogue/. */
export const PACKAGE_ROOT = join(import.meta.dir, "..", "..");

/** The catalogue shipped with this package; the default of `honeybee node --catalogue`. */
export const BUILTIN_CATALOGUE = join(PACKAGE_ROOT, "catalogue");
