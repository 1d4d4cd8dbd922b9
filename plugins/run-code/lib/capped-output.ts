import { StringDecoder } from "node:string_decoder";

/**
 * Collects one output stream of the program up to `limit` bytes. What comes after is read and
 * dropped — never buffered, and never left unread, which would block a program that floods the
 * pipe until its timeout.
 */
export class CappedOutput {
  readonly #limit: number;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #truncated = false;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Keeps what still fits of `chunk`. */
  push(chunk: Buffer): void {
    const room = this.#limit - this.#size;
    if (chunk.length > room) this.#truncated = true;
    if (room <= 0) return;
    // A copy, so a kept slice does not hold the whole of a large chunk in memory.
    const kept = chunk.length > room ? Buffer.from(chunk.subarray(0, room)) : chunk;
    this.#chunks.push(kept);
    this.#size += kept.length;
  }

  /** True when something was dropped. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /** The kept bytes as UTF-8; a character cut in half by the cap is left out rather than mangled. */
  text(): string {
    const decoder = new StringDecoder("utf8");
    const text = decoder.write(Buffer.concat(this.#chunks));
    return this.#truncated ? text : text + decoder.end();
  }
}
