/** Splits one command line into words the way a POSIX shell would for plain words and quotes. */
function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let index = 0; index < line.length; index++) {
    const character = line[index]!;
    if (character === "'" || character === '"') {
      const end = line.indexOf(character, index + 1);
      if (end === -1) throw new Error(`unterminated ${character} in: ${line}`);
      word = (word ?? "") + line.slice(index + 1, end);
      index = end;
    } else if (/\s/.test(character)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + character;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * The commands `skillbox new` suggests on its `next:` line (`next: skillbox test hello, then
 * skillbox dev`), each split into words; empty when it prints no such line. Separators a
 * sentence would use (", then", "then", ";", "&&") split the line; quoted text never does.
 */
export function parseNextCommands(output: string): string[][] {
  const line = output.split("\n").find((candidate) => candidate.trimStart().startsWith("next:"));
  if (line === undefined) return [];
  const text = line.trimStart().slice("next:".length);
  const commands: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (quote !== undefined) {
      if (character === quote) quote = undefined;
      current += character;
      continue;
    }
    if (character === "'" || character === '"') quote = character;
    const rest = text.slice(index);
    const separator = /^(,\s*then\s+|\s+then\s+|\s*;\s*|\s*&&\s*|,\s+)/.exec(rest);
    if (separator !== null) {
      commands.push(current);
      current = "";
      index += separator[0].length - 1;
      continue;
    }
    current += character;
  }
  commands.push(current);
  return commands
    .map((command) => command.trim())
    .filter((command) => command !== "")
    .map(splitCommandLine);
}
