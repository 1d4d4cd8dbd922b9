import type { DefinedSkill, ExecuteOptions, ExecutionError, SkillExecution } from "@skillbox/core";
import type { TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach } from "vitest";
import {
  createHttpRequestSkill,
  type HttpRequestOutput,
  type HttpRequestSettingsOptions,
} from "../../index.ts";
import { createHttpRequestHost, type LoggedLine } from "./http-request-host.js";
import { type RecordingHandler, type RecordingServer, startRecordingServer } from "./recording-server.js";

/** What every host and request of a test file starts from. */
export interface HttpRequestTestBedOptions {
  /** Settings under each host's own (e.g. loopback allowed, for files that talk to local servers). */
  settings?: HttpRequestSettingsOptions;
  /** Execute options under each request's own (no retries unless these or the request ask). */
  executeOptions?: ExecuteOptions;
}

/** An execution of `http-request` whose output is typed (it is `null` on errors all the same). */
export type HttpRequestExecution = Omit<SkillExecution<HttpRequestOutput>, "output" | "error"> & {
  output: HttpRequestOutput;
  error: ExecutionError | null;
};

/** Servers and hosts a test file starts; each is closed after the test that started it. */
export interface HttpRequestTestBed {
  /** Starts a recording server on 127.0.0.1, answering "ok" unless given a `handler`. */
  serve(handler?: RecordingHandler): Promise<RecordingServer>;
  /** A host running `skill` (the default export, say), logging into `logs`. */
  hostFor(skill: DefinedSkill, logs?: LoggedLine[]): TemporaryHost;
  /** A host with the skill built from the bed's settings and then `settings`, logging into `logs`. */
  hostWith(settings?: HttpRequestSettingsOptions, logs?: LoggedLine[]): TemporaryHost;
  /** Runs `http-request` on `host`. */
  request(
    host: TemporaryHost,
    input: Record<string, unknown>,
    options?: ExecuteOptions,
  ): Promise<HttpRequestExecution>;
}

/**
 * Creates a test file's {@link HttpRequestTestBed} and registers the `afterEach` that disposes its
 * hosts and closes its servers. Call it at the top level of the file.
 */
export function useHttpRequestTestBed(bedOptions: HttpRequestTestBedOptions = {}): HttpRequestTestBed {
  const hosts: TemporaryHost[] = [];
  const servers: RecordingServer[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.dispose();
    for (const server of servers.splice(0)) await server.close();
  });
  const hostFor = (skill: DefinedSkill, logs?: LoggedLine[]) => {
    const host = createHttpRequestHost(skill, logs);
    hosts.push(host);
    return host;
  };
  return {
    async serve(handler = (_request, response) => response.end("ok")) {
      const server = await startRecordingServer(handler);
      servers.push(server);
      return server;
    },
    hostFor,
    hostWith(settings = {}, logs) {
      return hostFor(createHttpRequestSkill({ ...bedOptions.settings, ...settings }), logs);
    },
    async request(host, input, options = {}) {
      const execution = await host.executor.execute<HttpRequestOutput>("http-request", input, {
        maxRetries: 0,
        ...bedOptions.executeOptions,
        ...options,
      });
      return { ...execution, output: execution.output as HttpRequestOutput };
    },
  };
}
