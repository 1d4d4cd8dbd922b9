// Runs inside a sandbox (a container or bwrap) for a TypeScript/JavaScript handler skill with
// no command of its own. Usage: node container-runner.mjs <handler module>
// Loads the handler first and prints {"ready":true} (so a pre-started sandbox of a warm pool
// is ready before its job arrives), then reads one job as JSON from stdin: { input, context },
// and prints one result line: {"ok":true,"output":…,"progressReports"?:n} or {"ok":false,…}.
// Everything the handler prints goes to stderr, where JSON lines are the handler's log entries
// and lines starting `\u001eskillbox:progress ` are its ctx.progress() reports (the host takes
// them out of stderr as they come; `progressReports` says how many came before the result).
// A traced job carries `trace: { traceparent, tracestate? }` (the host's `sandbox run` span): the
// handler runs under it with the span relay installed, and the spans it ended come back in the
// result line as `spans: { spans, dropped }` (bounded by the relay), for the host to replay.
import {
  createLogger,
  importHandler,
  ProgressThrottle,
  packagePathOf,
  SkillboxError,
  serializeError,
  startRelayedTask,
  traceHeaders,
} from "@skillbox/core/handler-module";

const writeResult = process.stdout.write.bind(process.stdout);
const writeStderr = process.stderr.write.bind(process.stderr);
// One write per report, as one line: a pipe takes a write of up to 4 KiB whole, so a report never
// interleaves with what the handler prints. Reports are cut to well below that.
const progress = new ProgressThrottle((report) => {
  writeStderr(`\u001eskillbox:progress ${JSON.stringify(report ?? null)}\n`);
});
// The handler's console.log and stray writes must not corrupt the result line.
process.stdout.write = process.stderr.write.bind(process.stderr);

/** The job's trace context and span relay, when the host traced it. */
let relayed;
/** The longest result line the host reads (its output limit). */
let maxLineBytes = 1024 * 1024;

function finish(envelope) {
  progress.close();
  if (progress.sent > 0) envelope.progressReports = progress.sent;
  let line;
  try {
    line = JSON.stringify(envelope);
  } catch (error) {
    line = JSON.stringify({
      ok: false,
      error: serializeError(new SkillboxError("OUTPUT_INVALID", `the output is not JSON: ${error.message}`)),
      progressReports: envelope.progressReports,
    });
  }
  if (relayed !== undefined) line = withSpans(line, relayed.relay.take());
  writeResult(`${line}\n`, () => process.exit(0));
}

/**
 * The result line with the job's spans in it. The host reads the line up to the sandbox's output
 * limit (`maxLineBytes`, sent with the job): spans that would push a line past it are left out
 * (counted as dropped), so tracing never fails an execution that fits without it.
 */
function withSpans(line, relayedSpans) {
  let spans = JSON.stringify(relayedSpans);
  if (Buffer.byteLength(line) + Buffer.byteLength(spans) + 16 > maxLineBytes) {
    spans = JSON.stringify({ spans: [], dropped: relayedSpans.dropped + relayedSpans.spans.length });
  }
  return `${line.slice(0, -1)},"spans":${spans}}`;
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const modulePath = process.argv[2];
// Where the skill's folder is mounted here, and where it is on the host (`handler-sandbox-plan.ts`
// sets both), so that a load failure names the files the user edits.
const { SKILLBOX_SKILL_MOUNT: skillMount, SKILLBOX_SKILL_SOURCE: skillSource } = process.env;
const onHost = (path) =>
  packagePathOf(
    skillMount !== undefined &&
      skillSource !== undefined &&
      (path === skillMount || path.startsWith(`${skillMount}/`))
      ? `${skillSource}${path.slice(skillMount.length)}`
      : path,
  );
// Handlers import `@skillbox/core` and `@skillbox/core/handler`; inside the sandbox both are the
// runner's light entry, which needs neither SQLite nor worker threads, whatever the skill installed.
const loading = importHandler(modulePath, {
  lightCore: true,
  ...(skillMount === undefined ? {} : { root: skillMount }),
  hostPath: onHost,
  relativeToCwd: false,
}).then(
  (handler) => ({ handler }),
  (error) => ({ error }),
);

const loaded = await loading;
writeResult('{"ready":true}\n');
const job = JSON.parse(await readStdin());
if (typeof job.trace?.traceparent === "string") {
  relayed = startRelayedTask(job.trace.traceparent, job.trace.tracestate ?? undefined);
  if (typeof job.trace.maxLineBytes === "number") maxLineBytes = job.trace.maxLineBytes;
}
if (loaded.error !== undefined) {
  finish({ ok: false, error: serializeError(loaded.error) });
} else {
  const controller = new AbortController();
  process.once("SIGTERM", () => controller.abort(new Error("the sandbox is stopping")));
  const { context } = job;
  const ctx = {
    ...context,
    approval: context.approval ?? null,
    signal: controller.signal,
    logger: createLogger({
      skill: `${context.skill.name}@${context.skill.version}`,
      executionId: context.executionId,
    }),
    progress(report) {
      progress.report(report);
    },
    traceHeaders() {
      return relayed === undefined ? {} : traceHeaders();
    },
    call() {
      return Promise.reject(
        new SkillboxError(
          "SANDBOX_FAILED",
          "ctx.call is not available inside a container sandbox; call the skill from the host",
          { retryable: false },
        ),
      );
    },
  };
  const run = () => loaded.handler(job.input, ctx);
  try {
    finish({ ok: true, output: await (relayed === undefined ? run() : relayed.run(run)) });
  } catch (error) {
    finish({ ok: false, error: serializeError(error) });
  }
}
