import { SkillboxError } from "../errors/skillbox-error.js";
import type { Skill } from "../types.js";
import type { ClaimedRow, JobStore, QueuedJob } from "./job-store.js";

/** Limits of the background queue of one host. */
export interface ExecutionQueueOptions {
  /** Most queued executions this host runs at once (default 16). */
  concurrency?: number;
  /** Most of one skill (by name) it runs at once (default: `concurrency`); a skill's own `concurrency` can lower it. */
  perSkillConcurrency?: number;
  /**
   * How often the host looks for work other processes queued, approvals they decided and
   * cancels they asked for, in ms (default 200). Its own submits start at once.
   */
  pollIntervalMs?: number;
}

/** A job the queue claimed, handed to whoever runs it. */
export interface ClaimedJob {
  job: QueuedJob;
  claimed: ClaimedRow;
  /** The skill version the job was submitted for; undefined when it is gone from the registry. */
  skill: Skill | undefined;
}

/** How many owners one dispatch round looks at, and how many of each owner's oldest jobs. */
const OWNERS_PER_ROUND = 64;
const JOBS_PER_OWNER = 16;

function checkedCount(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > 10_000) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `SkillExecutor: \`queue.${field}\` must be a whole number from 1 to 10000, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * The dispatcher of queued executions: oldest first, fair across owners (the owner served
 * least recently goes first), within the host's total and per-skill limits. It holds no job
 * in memory beyond those it runs: 10 000 queued executions cost rows on disk, not heap.
 */
export class ExecutionQueue {
  readonly concurrency: number;
  readonly perSkillConcurrency: number;
  readonly pollIntervalMs: number;
  private running = 0;
  private readonly runningBySkill = new Map<string, number>();
  /** When each owner was last served (a counter, not a clock): the least recent goes first. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private scheduled = false;
  private stopped = false;
  /** Whether the last look found no queued job (and none was queued since): reservations may go. */
  private backlogEmpty = false;
  /** This host's submits being written to the queue (not yet committed). */
  private submitting = 0;

  constructor(
    private readonly jobs: JobStore,
    private readonly run: (claimed: ClaimedJob) => Promise<unknown>,
    private readonly skillOf: (job: QueuedJob) => Skill | undefined,
    options: ExecutionQueueOptions = {},
  ) {
    this.concurrency = checkedCount("concurrency", options.concurrency, 16);
    this.perSkillConcurrency = checkedCount(
      "perSkillConcurrency",
      options.perSkillConcurrency,
      this.concurrency,
    );
    const poll = options.pollIntervalMs ?? 200;
    if (!Number.isFinite(poll) || poll < 5 || poll > 60_000) {
      throw new SkillboxError(
        "CONFIG_INVALID",
        `SkillExecutor: \`queue.pollIntervalMs\` must be a number of milliseconds from 5 to 60000, got ${JSON.stringify(options.pollIntervalMs)}`,
      );
    }
    this.pollIntervalMs = poll;
  }

  /** How many queued executions this host runs now. */
  get size(): number {
    return this.running;
  }

  /**
   * Takes a slot for an execution that starts at once instead of queueing (a submit when the
   * host has room and nothing waits): false when the host or the skill is at its limit, or when
   * queued work may be waiting — it goes first. Give the slot back with {@link release}.
   */
  reserve(skill: Skill, owner: string): boolean {
    if (this.stopped || !this.backlogEmpty || this.submitting > 0 || this.running >= this.concurrency)
      return false;
    if (!this.hasRoomFor(skill.name, skill)) return false;
    this.lastServed.set(owner, ++this.served);
    this.started(skill.name);
    return true;
  }

  /** Gives back a slot taken by {@link reserve} once its execution ended. */
  release(skillName: string): void {
    this.ended(skillName);
  }

  /** A submit of this host is being written to the queue: reservations wait for it. */
  noteQueued(): void {
    this.backlogEmpty = false;
    this.submitting++;
  }

  /** That submit is written (or failed): the next look finds it. */
  noteSubmitted(): void {
    this.submitting--;
    this.kick();
  }

  /** Looks for work on the next turn (several calls in one turn make one look). */
  kick(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  /** Stops taking jobs; those running go on (the executor's close drains them). */
  stop(): void {
    this.stopped = true;
  }

  /**
   * Claims jobs while there is room — owners in turn, the one served least recently first, each
   * owner's oldest job whose skill has room — in one transaction per round, and starts them.
   */
  dispatch(): void {
    while (!this.stopped && this.running < this.concurrency) {
      const { picked, exhausted } = this.pick(this.concurrency - this.running);
      if (picked.length === 0) return;
      const claims = this.jobs.claim(picked.map((entry) => entry.job));
      // Everything queued was taken, by this host: until more is queued, submits may start at once.
      if (exhausted && claims.every((claimed) => claimed !== undefined)) this.backlogEmpty = true;
      let started = 0;
      picked.forEach((entry, index) => {
        const claimed = claims[index];
        if (claimed === undefined) return;
        started++;
        this.lastServed.set(entry.job.api_key_id, ++this.served);
        this.started(entry.job.skill_name);
        const end = () => this.ended(entry.job.skill_name);
        this.run({ job: entry.job, claimed, skill: entry.skill }).then(end, end);
      });
      // Every pick was taken by other hosts: look again on the next poll rather than spin.
      if (started === 0) return;
    }
  }

  /** Up to `room` jobs to claim: owners in turn, each one's oldest jobs whose skill has room. */
  private pick(room: number): { picked: { job: QueuedJob; skill: Skill | undefined }[]; exhausted: boolean } {
    const owners = this.jobs.queuedOwners(OWNERS_PER_ROUND);
    if (owners.length === 0) {
      this.backlogEmpty = true;
      this.lastServed.clear();
      return { picked: [], exhausted: true };
    }
    this.backlogEmpty = false;
    const candidates = owners
      .map((owner) => ({ owner, jobs: this.jobs.queuedOf(owner, JOBS_PER_OWNER) }))
      .sort(
        (a, b) =>
          (this.lastServed.get(a.owner) ?? 0) - (this.lastServed.get(b.owner) ?? 0) ||
          (a.jobs[0]?.queued_at ?? 0) - (b.jobs[0]?.queued_at ?? 0),
      )
      .map((entry) => entry.jobs);
    // An owner with a full page of candidates may have more queued than the pick saw.
    const truncated = candidates.some((jobs) => jobs.length === JOBS_PER_OWNER);
    const picked: { job: QueuedJob; skill: Skill | undefined }[] = [];
    const planned = new Map<string, number>();
    // Round-robin over the owners: one job of each per turn, so a backlog of one owner does not
    // fill the room before another owner's first job.
    for (let turn = 0; turn < JOBS_PER_OWNER && picked.length < room; turn++) {
      let any = false;
      for (const jobs of candidates) {
        if (picked.length >= room) break;
        const job = this.nextWithRoom(jobs, planned);
        if (job === undefined) continue;
        any = true;
        picked.push(job);
        planned.set(job.job.skill_name, (planned.get(job.job.skill_name) ?? 0) + 1);
      }
      if (!any) break;
    }
    // Whether the pick holds every queued job: all owners seen, each one's jobs all read and taken.
    const exhausted =
      owners.length < OWNERS_PER_ROUND && candidates.every((jobs) => jobs.length === 0) && !truncated;
    return { picked, exhausted };
  }

  /** Takes the oldest job of `jobs` whose skill has room, counting the jobs planned this round. */
  private nextWithRoom(
    jobs: QueuedJob[],
    planned: Map<string, number>,
  ): { job: QueuedJob; skill: Skill | undefined } | undefined {
    for (let index = 0; index < jobs.length; index++) {
      const job = jobs[index]!;
      const skill = this.skillOf(job);
      if (this.hasRoomFor(job.skill_name, skill, planned.get(job.skill_name) ?? 0)) {
        jobs.splice(index, 1);
        return { job, skill };
      }
    }
    return undefined;
  }

  private hasRoomFor(skillName: string, skill: Skill | undefined, planned = 0): boolean {
    const limit = Math.min(this.perSkillConcurrency, skill?.concurrency ?? Number.POSITIVE_INFINITY);
    return (this.runningBySkill.get(skillName) ?? 0) + planned < limit;
  }

  private started(skillName: string): void {
    this.running++;
    this.runningBySkill.set(skillName, (this.runningBySkill.get(skillName) ?? 0) + 1);
  }

  private ended(skillName: string): void {
    this.running--;
    const count = (this.runningBySkill.get(skillName) ?? 1) - 1;
    if (count <= 0) this.runningBySkill.delete(skillName);
    else this.runningBySkill.set(skillName, count);
    if (!this.backlogEmpty) this.kick();
  }
}
