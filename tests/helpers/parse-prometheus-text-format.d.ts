// The package ships no types: what the metrics test reads of its result.
declare module "parse-prometheus-text-format" {
  interface Sample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export default function parse(text: string): { name: string; type: string; help: string; metrics: Sample[] }[];
}
