import { z } from "zod";
import { collectList } from "../lib/collect-list.js";
import { listOutputSchema, loginOf, rawUserSchema } from "../lib/github-shapes.js";
import { githubSkillFactory } from "../lib/github-skill-factory.js";
import { limitSchema, repositoryInputSchema } from "../lib/input-schemas.js";

const input = repositoryInputSchema({
  limit: limitSchema(30),
  includePrereleases: z
    .boolean()
    .default(true)
    .describe("Keep releases marked as pre-release (default true)"),
  includeDrafts: z
    .boolean()
    .default(false)
    .describe("Keep draft releases (default false; GitHub shows drafts only to tokens with push access)"),
});

const releaseSchema = z.object({
  id: z.number().int(),
  tagName: z.string(),
  name: z.string().nullable(),
  draft: z.boolean(),
  prerelease: z.boolean(),
  author: z.string().nullable(),
  createdAt: z.string(),
  publishedAt: z.string().nullable().describe("null for drafts"),
  url: z.string(),
  body: z.string().nullable().describe("Release notes (Markdown)"),
  tarballUrl: z.string().nullable(),
  zipballUrl: z.string().nullable(),
  assets: z.array(
    z.object({
      name: z.string(),
      size: z.number().int().min(0).describe("Bytes"),
      downloadCount: z.number().int().min(0),
      contentType: z.string().nullable(),
      url: z.string().describe("Browser download URL"),
    }),
  ),
});

const output = listOutputSchema(releaseSchema);

const rawReleaseSchema = z.object({
  id: z.number(),
  tag_name: z.string(),
  name: z.string().nullable().optional(),
  draft: z.boolean(),
  prerelease: z.boolean(),
  author: rawUserSchema,
  created_at: z.string(),
  published_at: z.string().nullable().optional(),
  html_url: z.string(),
  body: z.string().nullable().optional(),
  tarball_url: z.string().nullable().optional(),
  zipball_url: z.string().nullable().optional(),
  assets: z
    .array(
      z.object({
        name: z.string(),
        size: z.number(),
        download_count: z.number(),
        content_type: z.string().nullable().optional(),
        browser_download_url: z.string(),
      }),
    )
    .optional(),
});

function normalize(raw: z.output<typeof rawReleaseSchema>): z.output<typeof releaseSchema> {
  return {
    id: raw.id,
    tagName: raw.tag_name,
    name: raw.name || null,
    draft: raw.draft,
    prerelease: raw.prerelease,
    author: loginOf(raw.author),
    createdAt: raw.created_at,
    publishedAt: raw.published_at ?? null,
    url: raw.html_url,
    body: raw.body ?? null,
    tarballUrl: raw.tarball_url ?? null,
    zipballUrl: raw.zipball_url ?? null,
    assets: (raw.assets ?? []).map((asset) => ({
      name: asset.name,
      size: asset.size,
      downloadCount: asset.download_count,
      contentType: asset.content_type ?? null,
      url: asset.browser_download_url,
    })),
  };
}

function flag(item: unknown, name: "draft" | "prerelease"): boolean {
  return typeof item === "object" && item !== null && (item as Record<string, unknown>)[name] === true;
}

/** `github.releases`: a repository's releases, newest first, optionally without pre-releases, with or without drafts. */
export const createReleasesSkill = githubSkillFactory({
  input,
  output,
  async run(request, client) {
    const filtered = !request.includeDrafts || !request.includePrereleases;
    const keep = (item: unknown) =>
      (request.includeDrafts || !flag(item, "draft")) &&
      (request.includePrereleases || !flag(item, "prerelease"));
    return collectList(client, request, {
      path: "/releases",
      noun: "releases",
      keep: filtered ? keep : undefined,
      rawItem: rawReleaseSchema,
      normalize,
    });
  },
});

/** Reads the GitHub settings from the environment on every call. */
export default createReleasesSkill();
