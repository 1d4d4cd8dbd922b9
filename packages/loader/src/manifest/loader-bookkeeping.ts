import type { Skill } from "@skillbox/core";
import { z } from "zod";

/** Marks registry entries the loader manages (in `skill.metadata.loader`). */
export const LOADER_MARK = "@skillbox/loader";

/**
 * What the loader keeps about a skill it registered, beyond the skill's own fields (where its
 * code lives is `skill.code`): only the loader reads it back.
 */
export interface LoaderBookkeeping {
  /** The package folder (a bundle member's own folder, not the bundle). */
  root: string | undefined;
  /** The watched folder (or `npm:<project>`) the package was found through. */
  origin: string | undefined;
  /** The manifest's own `enabled`, to tell it from an operator's toggle (see `keepOperatorToggle`). */
  manifestEnabled: boolean | undefined;
}

/**
 * The bookkeeping fields in `metadata`. Rows come from the database, written by this or another
 * version of the loader: a field of the wrong type reads as absent instead of failing the row.
 */
const bookkeepingSchema = z
  .object({
    loader: z.literal(LOADER_MARK),
    root: z.string().optional().catch(undefined),
    origin: z.string().optional().catch(undefined),
    manifestEnabled: z.boolean().optional().catch(undefined),
  })
  .loose();

/** Parsed bookkeeping per metadata object: the serving filter asks for every skill on each listing. */
const parsed = new WeakMap<object, LoaderBookkeeping | null>();

/**
 * The loader's bookkeeping of `skill` when the loader registered it (its `metadata` carries the
 * loader mark), else undefined. The one place that reads the loader's fields of `metadata`.
 */
export function loaderBookkeepingOf(skill: Pick<Skill, "metadata">): LoaderBookkeeping | undefined {
  const { metadata } = skill;
  if (metadata === undefined || metadata === null) return undefined;
  let bookkeeping = parsed.get(metadata);
  if (bookkeeping === undefined) {
    const result = bookkeepingSchema.safeParse(metadata);
    bookkeeping = result.success
      ? { root: result.data.root, origin: result.data.origin, manifestEnabled: result.data.manifestEnabled }
      : null;
    parsed.set(metadata, bookkeeping);
  }
  return bookkeeping ?? undefined;
}

/** The `metadata` the loader registers a skill with: its mark and its bookkeeping. */
export function loaderMetadata(bookkeeping: {
  root: string;
  origin: string;
  manifestEnabled: boolean;
}): Record<string, unknown> {
  return {
    loader: LOADER_MARK,
    root: bookkeeping.root,
    origin: bookkeeping.origin,
    manifestEnabled: bookkeeping.manifestEnabled,
  };
}
