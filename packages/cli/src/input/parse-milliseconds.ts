import { InvalidArgumentError } from "commander";

/** A `--timeout <ms>` value: a positive whole number of milliseconds (else a usage error, exit 2). */
export function parseMilliseconds(value: string): number {
  const milliseconds = Number(value);
  if (!Number.isInteger(milliseconds) || milliseconds <= 0) {
    throw new InvalidArgumentError("must be a positive whole number of milliseconds");
  }
  return milliseconds;
}
