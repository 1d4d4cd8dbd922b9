/** One Server-Sent Event as a client sees it; a comment line is `{ comment }`. */
export interface ServerSentEvent {
  event?: string;
  id?: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read fields of arbitrary event payloads.
  data?: any;
  comment?: string;
}

/** Reads an SSE response the way EventSource does (events end at a blank line), one at a time. */
export class EventStreamReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #text = "";
  #ended = false;

  constructor(response: Response) {
    if (response.body === null) throw new Error("The response has no body");
    this.#reader = response.body.getReader();
  }

  /** The next event or comment; undefined once the server closed the stream. */
  async next(): Promise<ServerSentEvent | undefined> {
    for (;;) {
      const comment = /^:(.*)\n/.exec(this.#text);
      if (comment !== null) {
        this.#text = this.#text.slice(comment[0].length);
        return { comment: comment[1]!.trim() };
      }
      const end = this.#text.indexOf("\n\n");
      if (end !== -1) {
        const block = this.#text.slice(0, end);
        this.#text = this.#text.slice(end + 2);
        return parseBlock(block);
      }
      if (this.#ended) return undefined;
      const { done, value } = await this.#reader.read();
      if (done) this.#ended = true;
      else this.#text += this.#decoder.decode(value, { stream: true });
    }
  }

  /** Reads until an event named `name` (skipping comments and other events, returned in `skipped`). */
  async until(name: string): Promise<{ event: ServerSentEvent; skipped: ServerSentEvent[] }> {
    const skipped: ServerSentEvent[] = [];
    for (;;) {
      const event = await this.next();
      if (event === undefined) throw new Error(`The stream ended before a "${name}" event`);
      if (event.event === name) return { event, skipped };
      skipped.push(event);
    }
  }

  /** Whether the server closes the stream with no further event or comment. */
  async ended(): Promise<boolean> {
    return (await this.next()) === undefined;
  }

  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}

function parseBlock(block: string): ServerSentEvent {
  const event: ServerSentEvent = {};
  const data: string[] = [];
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event.event = value;
    else if (field === "id") event.id = value;
    else if (field === "data") data.push(value);
  }
  if (data.length > 0) event.data = JSON.parse(data.join("\n"));
  return event;
}
