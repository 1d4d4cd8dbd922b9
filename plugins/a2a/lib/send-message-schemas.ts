import { z } from "zod";

/** The input of `a2a.send-message`. */
export const sendMessageInput = z
  .object({
    agentUrl: z
      .url()
      .describe(
        "The agent's base URL (its card is read from <agentUrl>/.well-known/agent-card.json) or the URL of its agent card (ending in .json)",
      ),
    text: z.string().optional().describe("Sent as a text part"),
    data: z.record(z.string(), z.unknown()).optional().describe("Sent as a data part (a JSON object)"),
    skill: z
      .string()
      .min(1)
      .optional()
      .describe('Sent as message.metadata.skill: the skill a Skillbox agent runs ("name" or "name@range")'),
    metadata: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("The message's metadata (skill, when given, is added)"),
    contextId: z
      .string()
      .min(1)
      .optional()
      .describe("Continues a conversation: the contextId of an earlier answer"),
    acceptedOutputModes: z
      .array(z.string().min(1))
      .optional()
      .describe('Media types the answer may use, such as ["text/plain", "application/json"]'),
    returnImmediately: z
      .boolean()
      .optional()
      .describe(
        "Ask the agent to answer at once and poll the task until it is final (it is then cancelled when this execution is); default: the agent answers when done",
      ),
  })
  .strict()
  .meta({ anyOf: [{ required: ["text"] }, { required: ["data"] }] });

/** The input of `a2a.send-message`. */
export type SendMessageInput = z.output<typeof sendMessageInput>;

const part = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("text"), text: z.string() }),
  z.object({ kind: z.literal("data"), data: z.unknown() }),
  z.object({
    kind: z.literal("file"),
    url: z
      .string()
      .optional()
      .describe("Where the file is; absent when the agent sent its bytes (not returned)"),
    filename: z.string().optional(),
    mediaType: z.string().optional(),
    sizeBytes: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("How many bytes the agent sent inline (they are not returned)"),
  }),
]);

/** The output of `a2a.send-message`. */
export const sendMessageOutput = z.object({
  kind: z.enum(["message", "task"]).describe("Whether the agent answered with a message or a task"),
  taskId: z.string().optional(),
  contextId: z.string().optional().describe("Pass it as contextId to continue the conversation"),
  state: z
    .enum([
      "completed",
      "failed",
      "canceled",
      "rejected",
      "input-required",
      "auth-required",
      "submitted",
      "working",
      "unknown",
    ])
    .describe(
      "The task's state once settled (final, or waiting for input or auth); a message answer is completed",
    ),
  text: z
    .string()
    .describe("The answer's text parts joined by newlines (a task's artifacts, else its status message)"),
  data: z.array(z.unknown()).describe("The answer's data parts (a task's artifacts)"),
  statusMessage: z
    .string()
    .optional()
    .describe("The text of the task's status message: why it failed, what it needs"),
  artifacts: z.array(
    z.object({
      artifactId: z.string(),
      name: z.string().optional(),
      description: z.string().optional(),
      parts: z.array(part),
    }),
  ),
  metadata: z.record(z.string(), z.unknown()).optional().describe("The task's (or message's) metadata"),
});

/** The output of `a2a.send-message`. */
export type SendMessageOutput = z.output<typeof sendMessageOutput>;

/** One part of an answer as the output shows it. */
export type OutputPart = z.output<typeof part>;
