import { SkillboxError } from "@skillbox/core";

/**
 * How many event streams each owner has open, against one cap shared by every streaming route
 * (`/api/executions/:id/events` and `/api/events`): an owner cannot dodge the cap by mixing them.
 */
export class EventStreamSlots {
  readonly #open = new Map<string, number>();

  constructor(readonly maxStreamsPerOwner: number) {}

  /**
   * Takes a slot of `owner` and returns the function that gives it back (call it once), or
   * throws `RATE_LIMITED` when the owner has all its streams open; `instead` names what the
   * caller can do meanwhile.
   */
  acquire(owner: string, instead: string): () => void {
    const open = this.#open.get(owner) ?? 0;
    if (open >= this.maxStreamsPerOwner) {
      throw new SkillboxError(
        "RATE_LIMITED",
        `Owner "${owner}" has ${open} event streams open, the most this server allows; close one, or ${instead}`,
        { data: { maxStreamsPerOwner: this.maxStreamsPerOwner } },
      );
    }
    this.#open.set(owner, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(owner) ?? 1) - 1;
      if (left === 0) this.#open.delete(owner);
      else this.#open.set(owner, left);
    };
  }
}
