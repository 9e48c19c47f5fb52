/** The output types: a definition becomes its sink. */
import { fileSink } from "./file";
import type { OutputDefinition } from "./model";
import { mqttSink } from "./mqtt";
import { natsSink } from "./nats";
import type { Sink } from "./sink";
import { syslogSink } from "./syslog";
import { webhookSink } from "./webhook";

export function createSink(def: OutputDefinition): Sink {
  switch (def.type) {
    case "webhook":
      return webhookSink(def);
    case "syslog":
      return syslogSink(def);
    case "mqtt":
      return mqttSink(def);
    case "nats":
      return natsSink(def);
    case "file":
      return fileSink(def);
  }
}
