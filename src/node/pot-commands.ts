/**
 * Executes NodeCommands and answers each with CommandResult {command_id, ok, message}.
 *
 * Commands about one pot run one after another in arrival order (an InstallPot followed at
 * once by a DeployPot must not overtake it); commands about different pots run side by side.
 * A command naming a pot that is not installed is answered ok:false and reports no status: a
 * made-up Failed would create a pot in Core's registry that does not exist.
 */
import { rmSync } from "node:fs";
import { CatalogueError, loadCatalogue } from "../catalogue/loader";
import type { Logger } from "../log";
import { commandName, type InstallPot, type MessageKind, type NodeCommand, type Payload } from "../protocol/messages";
import { chooseSource, fetchCatalogue, CatalogueUnreachable, type FetchedCatalogue } from "./catalogue-fetch";
import { allowedGitUrl } from "./git-allow";
import type { BadCommand } from "./control-link";
import { checkPotId, planInstall, preflight, type TakenPort } from "./installer";
import { runInstall } from "./install-run";
import type { PotStore } from "./pot-store";
import { potDir, potRuntime, type NodeContext } from "./pot-runtime";
import { logFiles, readPotManifest, type OpResult, type Supervisor } from "./supervisor";

export interface PotCommandsOptions {
  nodeId: bigint;
  store: PotStore;
  supervisor: Supervisor;
  ctx: NodeContext;
  logsDir: string;
  /** Where git catalogues are cloned for the length of one install. */
  workDir: string;
  catalogue: { catalogue: string; catalogue_branch: string; git_allow: string[] };
  installTimeoutMs: number;
  /** Aborted at node shutdown: running installs are killed and end Failed. */
  signal: AbortSignal;
  logger: Logger;
  send<K extends MessageKind>(kind: K, payload: Payload<K>): boolean;
}

export function createPotCommands(opts: PotCommandsOptions) {
  const { store, supervisor, logger } = opts;
  const queues = new Map<string, Promise<unknown>>();
  const inFlight = new Set<Promise<void>>();

  const serial = (potId: string, op: () => Promise<OpResult>): Promise<OpResult> => {
    const prev = queues.get(potId) ?? Promise.resolve();
    const next = prev.then(op, op);
    const settled = next.catch(() => {});
    queues.set(potId, settled);
    void settled.then(() => {
      if (queues.get(potId) === settled) queues.delete(potId);
    });
    return next;
  };

  const result = (commandId: string | null | undefined, r: OpResult) => {
    if (!commandId) return logger.debug({ ok: r.ok, message: r.message }, "command without command_id finished; no CommandResult sent");
    opts.send("CommandResult", { command_id: commandId, node_id: opts.nodeId, ok: r.ok, message: r.message });
  };

  const reportStatus = (potId: string) => {
    const record = store.get(potId);
    const s = supervisor.status(potId);
    if (record && s) opts.send("PotStatusUpdate", { node_id: opts.nodeId, pot_id: potId, pot_type: record.pot_type, status: s.status, message: s.message || null });
  };

  const notInstalled = (potId: string): OpResult => {
    const ids = store.list().map((p) => p.pot_id);
    return { ok: false, message: `no pot ${potId} is installed on this node (installed: ${ids.length ? ids.join(", ") : "none"})` };
  };

  const onPot = (potId: string, op: () => Promise<OpResult>) => serial(potId, () => (store.get(potId)?.phase === "installed" ? op() : Promise.resolve(notInstalled(potId))));

  const takenPorts = (except: string): TakenPort[] => {
    const out: TakenPort[] = [];
    for (const r of store.list()) {
      if (r.pot_id === except) continue;
      const manifest = readPotManifest(potDir(opts.ctx, r.pot_id));
      if (typeof manifest === "string") continue;
      const rt = potRuntime(manifest, r.pot_id, r.config, opts.ctx);
      if (rt.ok) for (const p of rt.value.ports) out.push({ potId: r.pot_id, ...p });
    }
    return out;
  };

  const install = async (req: InstallPot): Promise<OpResult> => {
    const refused = preflight(req, (id) => store.get(id));
    if (refused) {
      if (store.get(req.pot_id)) {
        // Reporting Failed here would mark the existing (maybe running) pot as broken in
        // Core's registry; report its true status instead.
        reportStatus(req.pot_id);
      } else {
        supervisor.report(req.pot_id, req.honeypot_type, "Failed", refused);
        supervisor.forget(req.pot_id);
      }
      return { ok: false, message: refused };
    }
    let potType = req.honeypot_type;
    const failed = (message: string): OpResult => {
      supervisor.report(req.pot_id, potType, "Failed", message);
      supervisor.forget(req.pot_id);
      return { ok: false, message };
    };
    // The normalised URL is what gets cloned, so the check and the fetch agree (src/node/git-allow.ts).
    const gitUrl = req.git_url ? allowedGitUrl(req.git_url, opts.catalogue.catalogue, opts.catalogue.git_allow) : undefined;
    if (gitUrl === null) {
      return failed(`git_url ${req.git_url} is not allowed on this node; its operator can add it to git_allow (now: ${opts.catalogue.git_allow.join(", ") || "none"})`);
    }
    const source = chooseSource(opts.catalogue, gitUrl, req.git_branch);
    if (opts.signal.aborted) return failed("the node is shutting down");
    supervisor.report(req.pot_id, potType, "Installing", `installing ${req.honeypot_type} from ${source.location}${source.branch ? `#${source.branch}` : ""}`);
    let fetched: FetchedCatalogue | null = null;
    try {
      fetched = await fetchCatalogue(source, opts.workDir, opts.installTimeoutMs, opts.signal);
      const plan = planInstall(req, loadCatalogue(fetched.dir), opts.ctx, takenPorts(req.pot_id));
      if (!plan.ok) return failed(plan.message);
      potType = plan.value.kind.manifest.name;
      store.put({ pot_id: req.pot_id, pot_type: potType, config: plan.value.config, phase: "installing", desired: "stopped", source: fetched.label, installed_at: new Date().toISOString(), pid: null });
      const logs = logFiles(opts.logsDir, req.pot_id);
      const ran = await runInstall(plan.value, { logFile: logs.install, stepTimeoutMs: opts.installTimeoutMs, signal: opts.signal });
      if (!ran.ok) {
        removePot(req.pot_id);
        return failed(`${ran.message} (install log: ${logs.install})`);
      }
      store.update(req.pot_id, { phase: "installed", desired: plan.value.autoStart ? "running" : "stopped" });
      supervisor.report(req.pot_id, potType, "Stopped", `installed from ${fetched.label}`);
      logger.info({ pot_id: req.pot_id, pot_type: potType, source: fetched.label }, "honeypot installed");
      if (!plan.value.autoStart) return { ok: true, message: `installed ${potType} as ${req.pot_id}` };
      const started = await supervisor.start(req.pot_id);
      return { ok: started.ok, message: `installed ${potType} as ${req.pot_id}; ${started.message}` };
    } catch (e) {
      if (e instanceof CatalogueUnreachable || e instanceof CatalogueError) return failed(e.message);
      logger.error({ pot_id: req.pot_id, err: (e as Error).message }, "install failed");
      if (store.get(req.pot_id)?.phase === "installing") removePot(req.pot_id);
      return failed(`install failed: ${(e as Error).message}`);
    } finally {
      fetched?.cleanup();
    }
  };

  const removePot = (potId: string) => {
    rmSync(potDir(opts.ctx, potId), { recursive: true, force: true });
    store.remove(potId);
  };

  const statusOf = async (potId: string, detailed: boolean): Promise<OpResult> => {
    reportStatus(potId);
    const r = store.get(potId)!;
    const s = supervisor.status(potId)!;
    if (!detailed) return { ok: true, message: `${s.status}${s.message ? `: ${s.message}` : ""}` };
    const info = { pot_id: potId, pot_type: r.pot_type, status: s.status, message: s.message, desired: r.desired, pid: s.pid, source: r.source, installed_at: r.installed_at };
    return { ok: true, message: JSON.stringify(info) };
  };

  const run = async (cmd: NodeCommand): Promise<OpResult> => {
    const c = cmd.command as Record<string, unknown>;
    switch (commandName(cmd.command)) {
      case "InstallPot": {
        const req = c.InstallPot as InstallPot;
        return serial(req.pot_id, () => install(req));
      }
      case "DeployPot":
        return onPot(c.DeployPot as string, () => supervisor.start(c.DeployPot as string));
      case "StopPot":
        return onPot(c.StopPot as string, () => supervisor.stop(c.StopPot as string));
      case "RestartPot":
        return onPot(c.RestartPot as string, () => supervisor.restart(c.RestartPot as string));
      case "GetPotStatus":
        return onPot(c.GetPotStatus as string, () => statusOf(c.GetPotStatus as string, false));
      case "GetPotInfo":
        return onPot(c.GetPotInfo as string, () => statusOf(c.GetPotInfo as string, true));
      case "GetInstalledPots": {
        const pots = store.list().filter((p) => p.phase === "installed");
        for (const p of pots) reportStatus(p.pot_id);
        const list = pots.map((p) => `${p.pot_id} (${p.pot_type}, ${supervisor.status(p.pot_id)?.status ?? "Stopped"})`);
        return { ok: true, message: list.length ? `${list.length} pot(s): ${list.join(", ")}` : "no pots installed" };
      }
      case "Restart": {
        const running = store.list().filter((p) => p.phase === "installed" && p.desired === "running");
        const results = await Promise.all(running.map((p) => onPot(p.pot_id, () => supervisor.restart(p.pot_id))));
        const failed = results.filter((r) => !r.ok);
        return { ok: failed.length === 0, message: `restarted ${running.length - failed.length} of ${running.length} running pot(s)${failed.length ? `: ${failed.map((f) => f.message).join("; ")}` : ""}` };
      }
    }
  };

  const execute = async (cmd: NodeCommand): Promise<void> => {
    logger.info({ command: commandName(cmd.command), command_id: cmd.command_id }, "command received");
    let r: OpResult;
    try {
      r = await run(cmd);
    } catch (e) {
      logger.error({ err: (e as Error).message, command_id: cmd.command_id }, "command failed");
      r = { ok: false, message: `command failed: ${(e as Error).message}` };
    }
    result(cmd.command_id, r);
  };

  return {
    handle(cmd: NodeCommand): Promise<void> {
      const done = execute(cmd);
      inFlight.add(done);
      void done.finally(() => inFlight.delete(done));
      return done;
    },

    /** Resolves when every command under way has finished (after an abort, promptly). */
    async settle(): Promise<void> {
      await Promise.allSettled([...inFlight]);
    },

    /** A NodeCommand that failed validation: answer it, and report Failed for an InstallPot whose pot_id is unusable. */
    handleBad(bad: BadCommand): void {
      let message = bad.message;
      if (bad.potId && checkPotId(bad.potId)) {
        message = checkPotId(bad.potId)!;
        if (bad.honeypotType) opts.send("PotStatusUpdate", { node_id: opts.nodeId, pot_id: bad.potId, pot_type: bad.honeypotType, status: "Failed", message });
      }
      logger.warn({ command_id: bad.commandId }, `refused a command: ${message}`);
      result(bad.commandId, { ok: false, message });
    },
  };
}
