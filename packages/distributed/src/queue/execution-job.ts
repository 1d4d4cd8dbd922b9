/** One execution's job as a host adds it: the job id is the execution id. */
export interface ExecutionJob {
  executionId: string;
  /** The queue it goes to (the skill's, `default` unless it names one). */
  queue: string;
  /** The skill's content hash as the submitting host loaded it (kept on the job for operators; the claim carries the truth). */
  contentHash: string;
}

/** What a BullMQ job of Skillbox carries: only ids, never the input (that stays in the record). */
export interface ExecutionJobData {
  executionId: string;
  contentHash: string;
}

/** The BullMQ job name of every Skillbox job: the queue name says where it goes, the id which execution. */
export const EXECUTION_JOB_NAME = "execution";
