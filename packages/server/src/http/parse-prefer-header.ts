import { requestInvalid } from "./http-error.js";

/** Longest `Prefer` header accepted (every `Prefer` line of a request, joined): a few preferences fit easily. */
export const MAX_PREFER_HEADER_LENGTH = 1024;

/** The preferences of a `Prefer` header (RFC 7240) this server honours. */
export interface RequestPreferences {
  /** `respond-async`: answer 202 with the queued execution instead of waiting for it. */
  respondAsync: boolean;
  /** `wait=N`: how many seconds the client is willing to wait for a final answer, if it said so. */
  waitSeconds: number | undefined;
}

const NO_PREFERENCES: RequestPreferences = { respondAsync: false, waitSeconds: undefined };

/** RFC 9110 `tchar`. */
const TOKEN_CHARACTER = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
/** Delta-seconds, at most ten digits (well past any bound the routes apply). */
const DELTA_SECONDS = /^\d{1,10}$/;

/**
 * Parses a `Prefer` header by the grammar of RFC 7240 (`token [= word] *(; parameter)`, comma
 * separated, empty list elements allowed, names case-insensitive, the first of a repeated
 * preference wins). Preferences other than `respond-async` and `wait` are ignored, as the RFC
 * asks; a header that breaks the grammar, is longer than {@link MAX_PREFER_HEADER_LENGTH}, or
 * gives `respond-async` a value or `wait` something other than seconds is a `REQUEST_INVALID`
 * naming the header: a client that sent a preference should learn it was not understood rather
 * than get a synchronous answer it did not ask for.
 */
export function parsePreferHeader(header: string | undefined): RequestPreferences {
  if (header === undefined) return NO_PREFERENCES;
  if (header.length > MAX_PREFER_HEADER_LENGTH) {
    throw malformed(
      `is ${header.length} characters long, more than the ${MAX_PREFER_HEADER_LENGTH} this server reads; ` +
        'send only the preferences it honours, such as "respond-async, wait=10"',
    );
  }
  const preferences = new Map<string, string | undefined>();
  const reader = new HeaderReader(header);
  for (;;) {
    reader.skipWhitespaceAndCommas();
    if (reader.atEnd()) break;
    const name = reader.token();
    if (name === "") throw malformed(`has ${reader.unexpected()} where a preference name should start`);
    const value = reader.optionalValue(name);
    reader.skipParameters(name);
    reader.skipWhitespace();
    if (!reader.atEnd() && !reader.consume(",")) {
      throw malformed(
        `has ${reader.unexpected()} after the preference "${name}"; separate preferences with ","`,
      );
    }
    const key = name.toLowerCase();
    if (!preferences.has(key)) preferences.set(key, value);
  }
  return interpret(preferences);
}

function interpret(preferences: Map<string, string | undefined>): RequestPreferences {
  let waitSeconds: number | undefined;
  if (preferences.has("respond-async") && preferences.get("respond-async") !== undefined) {
    throw malformed(`gives "respond-async" a value; it takes none: send "Prefer: respond-async"`);
  }
  if (preferences.has("wait")) {
    const value = preferences.get("wait");
    if (value === undefined || !DELTA_SECONDS.test(value)) {
      throw malformed(
        `has "wait" ${value === undefined ? "without a value" : `= ${JSON.stringify(value)}`}; ` +
          'it takes a whole number of seconds, such as "wait=10"',
      );
    }
    waitSeconds = Number(value);
  }
  return { respondAsync: preferences.has("respond-async"), waitSeconds };
}

function malformed(problem: string) {
  return requestInvalid(`The \`Prefer\` header ${problem}`, { header: "Prefer" });
}

/** A cursor over the header text with the RFC 7240 productions the parser needs. */
class HeaderReader {
  #position = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  atEnd(): boolean {
    return this.#position >= this.#text.length;
  }

  consume(character: string): boolean {
    if (this.#text[this.#position] !== character) return false;
    this.#position++;
    return true;
  }

  skipWhitespace(): void {
    while (this.#text[this.#position] === " " || this.#text[this.#position] === "\t") this.#position++;
  }

  skipWhitespaceAndCommas(): void {
    for (;;) {
      this.skipWhitespace();
      if (!this.consume(",")) return;
    }
  }

  token(): string {
    const start = this.#position;
    while (!this.atEnd() && TOKEN_CHARACTER.test(this.#text[this.#position]!)) this.#position++;
    return this.#text.slice(start, this.#position);
  }

  /** `BWS "=" BWS word` if an `=` follows; the value of a quoted string is unquoted. */
  optionalValue(name: string): string | undefined {
    const before = this.#position;
    this.skipWhitespace();
    if (!this.consume("=")) {
      this.#position = before;
      return undefined;
    }
    this.skipWhitespace();
    if (this.#text[this.#position] === '"') return this.#quotedString(name);
    const value = this.token();
    if (value === "") {
      throw malformed(`has "${name}=" followed by ${this.unexpected()} instead of a value`);
    }
    return value;
  }

  /** `*( OWS ";" [ OWS parameter ] )`: parameters are checked for syntax and otherwise ignored. */
  skipParameters(name: string): void {
    for (;;) {
      const before = this.#position;
      this.skipWhitespace();
      if (!this.consume(";")) {
        this.#position = before;
        return;
      }
      this.skipWhitespace();
      const parameter = this.token();
      if (parameter !== "") this.optionalValue(`${name}; ${parameter}`);
    }
  }

  /** What is at the cursor, for a message: a quoted character or "its end". */
  unexpected(): string {
    return this.atEnd() ? "its end" : JSON.stringify(this.#text[this.#position]);
  }

  #quotedString(name: string): string {
    this.#position++;
    let value = "";
    while (!this.atEnd()) {
      const character = this.#text[this.#position++]!;
      if (character === '"') return value;
      if (character === "\\") {
        if (this.atEnd()) break;
        value += this.#text[this.#position++];
      } else {
        value += character;
      }
    }
    throw malformed(`has an unterminated quoted value for "${name}"`);
  }
}
