/** Prometheus metrics of this process (`GET /metrics`): a scraper sums a cluster's instances. */
import type { Feature } from "../../core/context";
import { type CoreMetrics, metricsApi } from "./prometheus";

export { CoreMetrics, type MetricsSources } from "./prometheus";

/** The metrics exist before the pipeline that counts into them; the feature serves them. */
export function metricsFeature(metrics: CoreMetrics): Feature {
  return { name: "metrics", routes: metricsApi(metrics) };
}
