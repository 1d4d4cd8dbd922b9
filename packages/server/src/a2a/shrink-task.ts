import { type Part, Role, type Task } from "@a2a-js/sdk";

/** A task as the store keeps it, and the bytes it counts for. */
export interface ShrunkTask {
  task: Task;
  /** The serialised (JSON, UTF-8) size of `task`. */
  bytes: number;
}

/** One part of a task that could give way to a reference. */
interface PartSlot {
  parts: Part[];
  index: number;
  bytes: number;
  /** What the part holds, for the reference's text. */
  holds: "output" | "input" | "message";
}

/**
 * Brings a finished task under `maxBytes` (its serialised size) by replacing its largest parts —
 * artifact parts (the output), the caller's message parts (the input), agent messages — one by
 * one, largest first, with a small text part saying how big the part was and where the whole
 * execution is (`GET /api/executions/<executionId>`, which keeps input and output). State,
 * metadata and the small parts stay. `task` is changed in place (the store hands it a copy).
 * Metadata is never cut, so a task whose metadata alone is over `maxBytes` stays over it.
 */
export function shrinkTask(task: Task, maxBytes: number): ShrunkTask {
  let bytes = byteSizeOf(task);
  if (bytes <= maxBytes) return { task, bytes };
  const executionId = executionIdOf(task);
  const slots: PartSlot[] = [];
  for (const artifact of task.artifacts ?? []) slotsOf(artifact.parts, "output", slots);
  for (const message of task.history ?? []) {
    slotsOf(message.parts, message.role === Role.ROLE_USER ? "input" : "message", slots);
  }
  if (task.status?.message !== undefined) slotsOf(task.status.message.parts, "message", slots);
  slots.sort((a, b) => b.bytes - a.bytes);
  for (const slot of slots) {
    if (bytes <= maxBytes) break;
    const reference = referencePart(slot, executionId, maxBytes);
    slot.parts[slot.index] = reference;
    bytes -= slot.bytes - byteSizeOf(reference);
  }
  return { task, bytes: byteSizeOf(task) };
}

/** The serialised size of a value as `tasks/get` would send it (JSON, UTF-8). */
export function byteSizeOf(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "");
}

function slotsOf(parts: Part[] | undefined, holds: PartSlot["holds"], slots: PartSlot[]): void {
  if (parts === undefined) return;
  for (let index = 0; index < parts.length; index++) {
    slots.push({ parts, index, bytes: byteSizeOf(parts[index]), holds });
  }
}

/** Where the executor puts the execution id: the task's metadata, else the output artifact's. */
function executionIdOf(task: Task): string | undefined {
  const fromTask = task.metadata?.executionId;
  if (typeof fromTask === "string") return fromTask;
  for (const artifact of task.artifacts ?? []) {
    const fromArtifact = artifact.metadata?.executionId;
    if (typeof fromArtifact === "string") return fromArtifact;
  }
  return undefined;
}

function referencePart(slot: PartSlot, executionId: string | undefined, maxBytes: number): Part {
  const location = executionId === undefined ? undefined : `/api/executions/${executionId}`;
  const where =
    location === undefined
      ? "The task ran no execution, so it is not kept anywhere."
      : `The execution, its input and output included, is at GET ${location}.`;
  return {
    content: {
      $case: "text",
      value:
        `This ${slot.holds} part (${slot.bytes} bytes) was dropped from the stored task: ` +
        `a task keeps at most ${maxBytes} bytes. ${where}`,
    },
    metadata: {
      omitted: {
        holds: slot.holds,
        bytes: slot.bytes,
        ...(location === undefined ? {} : { executionId, location }),
      },
    },
    filename: "",
    mediaType: "text/plain",
  };
}
