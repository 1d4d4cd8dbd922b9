import { defineInterceptor, type Interceptor, SkillboxError } from "@skillbox/core";

/** Options of the timing interceptor (the `options` block of `interceptor.json`). */
export interface TimingOptions {
  /** Output property that receives the duration (default `durationMs`). */
  field?: string;
  /** Only skills with one of these tags are timed (default `["timed"]`). */
  tags?: string[];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Creates the timing interceptor: adds how long the execution took, in milliseconds, to the output
 * of matching skills. Its high `order` makes it the innermost layer, so on the way out it runs
 * first and outer interceptors (a logger, a cache) see the output with the field already added.
 */
export function createTimingInterceptor(options: TimingOptions = {}): Interceptor {
  const field = options.field ?? "durationMs";
  const tags = options.tags ?? ["timed"];
  // Fail when the plugin loads, naming the option, rather than on the first execution.
  if (typeof field !== "string" || field === "") {
    throw new SkillboxError(
      "MANIFEST_INVALID",
      'interceptor "timing": `options.field` must be a non-empty string',
    );
  }
  if (!Array.isArray(tags) || !tags.every((tag) => typeof tag === "string")) {
    throw new SkillboxError(
      "MANIFEST_INVALID",
      'interceptor "timing": `options.tags` must be an array of strings',
    );
  }
  return defineInterceptor({
    name: "timing",
    order: 100,
    match: { tags },
    after(_context, result) {
      // Only objects can carry an extra field; other outputs pass through untouched.
      if (!isPlainObject(result.output)) return undefined;
      return { output: { ...result.output, [field]: Math.round(result.duration * 1000) / 1000 } };
    },
  });
}

/** The plugin's entry point: the loader calls it with the manifest's `options`. */
export default createTimingInterceptor;
