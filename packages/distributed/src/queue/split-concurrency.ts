/**
 * Shares a worker's `concurrency` out over its queues' BullMQ workers, as evenly as it goes (the
 * first queues get the remainder), at least one each. A BullMQ worker locks as many jobs as its
 * own concurrency; were each given the whole count, a worker on two queues would hold twice the
 * jobs it can run, locked and idle while other workers wait for work. The shares add up to
 * `concurrency` unless there are more queues than that (then each still takes one, and the
 * worker's shared {@link RunSlots} keeps the runs at `concurrency`).
 */
export function splitConcurrency(concurrency: number, queues: number): number[] {
  const share = Math.floor(concurrency / queues);
  const remainder = concurrency % queues;
  return Array.from({ length: queues }, (_, index) => Math.max(1, share + (index < remainder ? 1 : 0)));
}
