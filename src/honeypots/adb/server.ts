/**
 * The adb kind: an Android handset with ADB over TCP open (adbd after `adb tcpip 5555`, or a TV
 * box shipped that way), answering without asking for authorization. Each connection gets its
 * own device state (file tree, shell), so what one attacker pushes only they see.
 */
import type manifest from "../../../catalogue/adb/manifest.json";
import { parseByteCount, parsePort, parsePositiveInt } from "../shared/config.ts";
import type { PotContext, PotHandle } from "../shared/lifecycle.ts";
import { listen, listenerBounds } from "../shared/listener.ts";
import { Outbox } from "../shared/outbox.ts";
import { PotSession } from "../shared/session.ts";
import { AdbConnection } from "./connection.ts";
import { deviceProps, FEATURES, type Product } from "./device.ts";
import { FakeFs } from "./filesystem.ts";
import { deviceBanner } from "./protocol.ts";

export async function startAdb({ config, sink, logger }: PotContext<keyof typeof manifest.config>): Promise<PotHandle> {
  const product: Product = { name: config.product_name, model: config.product_model, device: config.product_device, manufacturer: config.product_manufacturer };
  const props = deviceProps(product);
  const buildProp = [...props].filter(([k]) => k.startsWith("ro.build") || k.startsWith("ro.product")).map(([k, v]) => `${k}=${v}\n`).join("");
  const banner = deviceBanner(product, FEATURES);
  const uploadMax = parsePositiveInt("upload_max_bytes", config.upload_max_bytes);
  const outbox = new Outbox(process.cwd(), parseByteCount("outbox_max_bytes", config.outbox_max_bytes));

  const listener = await listen(
    { ...listenerBounds(config, logger), name: "adb", port: parsePort("adb_port", config.adb_port) },
    (socket) => {
      const session = PotSession.accepted(socket, "adb", "adb", sink);
      new AdbConnection(socket, session, banner, { fs: new FakeFs(buildProp), props, product, outbox, uploadMax });
    },
  );

  return {
    ports: { adb: listener.port },
    stop: () => listener.close(),
  };
}
