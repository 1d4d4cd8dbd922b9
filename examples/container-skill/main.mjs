// Container sandboxes for skills: loads ./plugins, where `word-count` is a TypeScript handler
// that Skillbox runs inside a container with no Dockerfile, and `shout` is a command in an
// image. Needs podman (or docker, or bubblewrap) and the test image:
//   bash packages/sandbox/scripts/build-test-image.sh
import { fileURLToPath } from "node:url";
import { createSkillHost } from "@skillbox/core";
import { loadSkills } from "@skillbox/loader";
import { createContainerRuntime, sandboxRunner } from "@skillbox/sandbox";

const runtime = createContainerRuntime();
const host = createSkillHost({ runtimes: [runtime] });
try {
  await loadSkills({
    registry: host.registry,
    executor: host.executor,
    dirs: [fileURLToPath(new URL("./plugins", import.meta.url))],
    npm: false,
  });
  console.log(`sandbox provider: ${(await sandboxRunner.getProvider()).name}`);

  const counted = await host.executor.execute("word-count", { text: "sandboxes for every skill" });
  console.log(`word-count → ${counted.status} ${JSON.stringify(counted.output ?? counted.error)}`);

  const shouted = await host.executor.execute("shout@^1", { msg: "hello from a container" });
  console.log(`shout → ${shouted.status} ${JSON.stringify(shouted.output ?? shouted.error)}`);

  // The warm pool pre-started a sandbox for word-count: the next call skips the start-up.
  await runtime.warmUp(host.registry.resolveVersion("word-count"));
  const started = performance.now();
  const warm = await host.executor.execute("word-count", { text: "warm and fast" });
  console.log(
    `word-count (warm) → ${warm.status} ${JSON.stringify(warm.output)} in ${Math.round(performance.now() - started)} ms`,
  );
} finally {
  await host.close();
}
