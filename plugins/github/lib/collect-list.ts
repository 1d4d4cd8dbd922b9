import { z } from "zod";
import type { GithubClient, Query } from "./github-client.js";
import { parseGithubAnswer } from "./github-shapes.js";
import { repositoryPath } from "./input-schemas.js";

/** The part of a list skill's input that says which repository to read and how much of it. */
export interface RepositoryListRequest {
  owner: string;
  repo: string;
  limit: number;
}

/** One of a repository's list endpoints, and how to turn its items into a skill's items. */
export interface RepositoryListEndpoint<RawItem extends z.ZodType, Item> {
  /** The path below the repository's, e.g. `/issues`. */
  path: string;
  /** What the items are, for error messages: "issues", "pull requests". */
  noun: string;
  query?: Query;
  /** Items to drop before they count against the limit (see {@link GithubClient.collect}). */
  keep?: (item: unknown) => boolean;
  /** The fields of GitHub's item the skill reads. */
  rawItem: RawItem;
  normalize(raw: z.output<RawItem>): Item;
}

/** The output of every list skill (see `listOutputSchema`). */
export interface RepositoryList<Item> {
  /** `owner/name`. */
  repository: string;
  items: Item[];
  count: number;
  truncated: boolean;
}

/**
 * Collects a repository's list over GitHub's pages up to `request.limit`, checks every item
 * against `rawItem` and normalizes it, so each list skill only says what to ask and how to map.
 */
export async function collectList<RawItem extends z.ZodType, Item>(
  client: GithubClient,
  request: RepositoryListRequest,
  endpoint: RepositoryListEndpoint<RawItem, Item>,
): Promise<RepositoryList<Item>> {
  const subject = `repository ${request.owner}/${request.repo}`;
  const pages = await client.collect(
    repositoryPath(request.owner, request.repo, endpoint.path),
    endpoint.query ?? {},
    subject,
    { limit: request.limit, keep: endpoint.keep },
  );
  const rawItems = parseGithubAnswer(
    z.array(endpoint.rawItem),
    pages.items,
    `the ${endpoint.noun} of ${subject}`,
  );
  const items = rawItems.map((raw) => endpoint.normalize(raw));
  return {
    repository: `${request.owner}/${request.repo}`,
    items,
    count: items.length,
    truncated: pages.truncated,
  };
}
