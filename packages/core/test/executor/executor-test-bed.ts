import {
  isSkillboxError,
  type Skill,
  SkillboxError,
  type SkillHost,
  type SkillHostOptions,
  type SkillRegistration,
} from "@skillbox/core";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, expect } from "vitest";

/** Creates hosts on real database files; what it made is closed after each test of the file. */
export type NewHost = (options?: Omit<SkillHostOptions, "database">) => TemporaryHost;

/**
 * Registers an `afterEach` that disposes every host the returned function created during the
 * test (and closes any host passed to `track`). `defaults` apply to every host it creates.
 */
export function useTemporaryHosts(defaults: Omit<SkillHostOptions, "database"> = {}): NewHost & {
  /** Closes `host` after the test too (hosts made another way, on the same file say). */
  track(host: SkillHost): SkillHost;
} {
  const hosts: TemporaryHost[] = [];
  const tracked: SkillHost[] = [];
  afterEach(async () => {
    for (const host of tracked.splice(0)) await host.close();
    for (const host of hosts.splice(0)) await host.dispose();
  });
  const newHost = (options: Omit<SkillHostOptions, "database"> = {}) => {
    const host = createTemporaryHost({ ...defaults, ...options });
    hosts.push(host);
    return host;
  };
  return Object.assign(newHost, {
    track(host: SkillHost) {
      tracked.push(host);
      return host;
    },
  });
}

/** Registers a public `1.0.0` skill whose handler name equals its name; returns the stored skill. */
export function registerSkill(host: SkillHost, registration: Partial<SkillRegistration> & { name: string }) {
  return host.registry.register({
    version: "1.0.0",
    handler: registration.name,
    apiKeyId: "public",
    ...registration,
  });
}

/** A promise with its settle functions, for handlers a test releases when it wants. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((settle, fail) => {
    resolve = settle;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** Expects `promise` to reject with a SkillboxError of `code` and returns it. */
export async function rejection(promise: Promise<unknown>, code: string): Promise<SkillboxError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected a rejection with ${code}`);
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SkillboxError);
  expect(isSkillboxError(error), `expected a SkillboxError ${code}, got ${String(error)}`).toBe(true);
  expect((error as SkillboxError).code).toBe(code);
  return error as SkillboxError;
}

/**
 * A skill record as the registry would hand it over, for tests of pieces that take a `Skill`
 * without a registry (the attempt runner, abort plumbing): only the fields they read matter.
 */
export function skillRecord(fields: Partial<Skill> & { name: string }): Skill {
  return {
    id: "00000000-0000-7000-8000-000000000000",
    version: "1.0.0",
    description: "",
    apiKeyId: "public",
    schema: { input: {} },
    handler: fields.name,
    runtime: "inline",
    tags: [],
    enabled: true,
    source: "api",
    contentHash: "hash",
    createdAt: new Date(0).toISOString(),
    updatedAt: new Date(0).toISOString(),
    ...fields,
  };
}
