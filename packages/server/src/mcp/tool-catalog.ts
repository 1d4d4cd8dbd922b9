import { performance } from "node:perf_hooks";
import { createToolNameMap, type Skill, type SkillRegistry } from "@skillbox/core";
import { type SkillTool, skillToTool } from "./skill-to-tool.js";

/** The tools one owner sees at one moment. */
export interface ToolSnapshot {
  /** By skill name. */
  tools: SkillTool[];
  byToolName: Map<string, SkillTool>;
  /** The tool definitions as JSON: equal signatures mean an unchanged `tools/list`. */
  signature: string;
}

/** Options of {@link ToolCatalog}. */
export interface ToolCatalogOptions {
  /** Quiet time after a registry change before tool lists are compared, in ms (default 50). */
  settleMs?: number;
  /** Longest a stream of changes may postpone the comparison, in ms (default 500). */
  maxSettleMs?: number;
  /** How often writes by other processes are looked for, in ms (default 500). */
  externalCheckIntervalMs?: number;
}

interface OwnerWatch {
  signature: string;
  listeners: Set<() => void>;
}

/**
 * The registry seen as MCP tools, per owner: every enabled skill the owner may see, at its
 * highest stable version (what `execute(name)` runs), as a {@link SkillTool}.
 *
 * Subscribers hear when an owner's tool list really changed: registry `change` events (a hot
 * reload, enable/disable, a registration) are let settle for `settleMs` so a burst (a loader
 * syncing a folder) is compared once, and the owner's definitions are compared with the last
 * ones, so a reload that changes only code, or a skill of another owner, notifies nobody. A
 * steady stream of changes postpones the comparison by at most `maxSettleMs`.
 *
 * The registry only notices a write by another process on its next lookup, so while anyone is
 * subscribed the catalog makes one (cheap: a revision read) every `externalCheckIntervalMs`.
 * One catalog serves any number of servers with a single registry listener.
 */
export class ToolCatalog {
  private readonly snapshots = new Map<string, ToolSnapshot>();
  private readonly watches = new Map<string, OwnerWatch>();
  private readonly settleMs: number;
  private readonly maxSettleMs: number;
  private readonly externalCheckIntervalMs: number;
  private settleTimer: NodeJS.Timeout | undefined;
  /** When the first change not yet compared arrived (`performance.now()`). */
  private firstPendingChangeAt: number | undefined;
  private externalCheckTimer: NodeJS.Timeout | undefined;
  private readonly onRegistryChange = () => {
    this.snapshots.clear();
    if (this.watches.size === 0) return;
    const now = performance.now();
    this.firstPendingChangeAt ??= now;
    const delay = Math.min(this.settleMs, this.firstPendingChangeAt + this.maxSettleMs - now);
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => this.compare(), Math.max(0, delay));
  };

  constructor(
    readonly registry: SkillRegistry,
    options: ToolCatalogOptions = {},
  ) {
    this.settleMs = options.settleMs ?? 50;
    this.maxSettleMs = options.maxSettleMs ?? 500;
    this.externalCheckIntervalMs = options.externalCheckIntervalMs ?? 500;
    // Always listening keeps cached snapshots right even while nobody subscribes.
    registry.on("change", this.onRegistryChange);
  }

  /** The tools `owner` sees now (cached until the registry changes). */
  snapshot(owner: string): ToolSnapshot {
    this.lookForExternalWrites();
    let snapshot = this.snapshots.get(owner);
    if (snapshot === undefined) {
      snapshot = this.build(owner);
      this.snapshots.set(owner, snapshot);
    }
    return snapshot;
  }

  /** Calls `listener` whenever the tool list of `owner` changes. Returns the unsubscribe function. */
  subscribe(owner: string, listener: () => void): () => void {
    let watch = this.watches.get(owner);
    if (watch === undefined) {
      if (this.watches.size === 0) this.start();
      watch = { signature: this.snapshot(owner).signature, listeners: new Set() };
      this.watches.set(owner, watch);
    }
    watch.listeners.add(listener);
    const current = watch;
    return () => {
      current.listeners.delete(listener);
      if (current.listeners.size === 0 && this.watches.get(owner) === current) {
        this.watches.delete(owner);
        if (this.watches.size === 0) this.stop();
      }
    };
  }

  /** Drops every subscription and stops listening to the registry. */
  close(): void {
    this.watches.clear();
    this.stop();
    this.registry.off("change", this.onRegistryChange);
    this.snapshots.clear();
  }

  private build(owner: string): ToolSnapshot {
    const skills: Skill[] = [];
    for (const name of new Set(this.registry.list(owner).map((skill) => skill.name))) {
      // Enabled versions only, prereleases only when nothing stable exists: the version
      // `execute(name)` would run, which is what a call of this tool runs.
      const skill = this.registry.resolveVersion(name, undefined, owner);
      if (skill !== null) skills.push(skill);
    }
    // Named over exactly the tools listed together, as `@skillbox/llm` names the same skills.
    const names = createToolNameMap(skills.map((skill) => ({ name: skill.name })));
    const tools = skills.map((skill) => skillToTool(skill, names.toolName({ name: skill.name }) as string));
    const byToolName = new Map(tools.map((entry) => [entry.tool.name, entry]));
    return { tools, byToolName, signature: JSON.stringify(tools.map((entry) => entry.tool)) };
  }

  private compare(): void {
    this.settleTimer = undefined;
    this.firstPendingChangeAt = undefined;
    for (const [owner, watch] of this.watches) {
      const { signature } = this.snapshot(owner);
      if (signature === watch.signature) continue;
      watch.signature = signature;
      for (const listener of [...watch.listeners]) {
        try {
          listener();
        } catch {
          // One subscriber's failure must not keep the others uninformed.
        }
      }
    }
  }

  private lookForExternalWrites(): void {
    this.registry.checkForChanges();
  }

  private start(): void {
    this.externalCheckTimer = setInterval(() => this.lookForExternalWrites(), this.externalCheckIntervalMs);
    // Watching must never be what keeps a process alive.
    this.externalCheckTimer.unref();
  }

  private stop(): void {
    clearInterval(this.externalCheckTimer);
    clearTimeout(this.settleTimer);
    this.externalCheckTimer = undefined;
    this.settleTimer = undefined;
    this.firstPendingChangeAt = undefined;
  }
}
