// Whether an answer lets on that its mistake was made on purpose. The error-inducing prompt forbids
// it, but models slip, most often in a comment that labels the mistake (`# Syntax Error: missing
// parenthesis`). Such a comment is published twice, in the answer and in the traceback that quotes
// the line, so the dialogue no longer reads as a genuine debugging session.
import { extractCodeBlocks } from "../../pipeline/code/index.js";

const INTENT =
  /\b(?:intentional(?:ly)?|deliberate(?:ly)?|on purpose|purposely|purposefully|(?:introduc|insert|plant)(?:e|ed|es|ing)? (?:an? |some |the )?(?:\w+ ){0,2}(?:errors?|bugs?|mistakes?)|make (?:a )?mistakes?|wrong code)\b/i;

const NAMES_THE_ERROR =
  /\b(?:syntax|logic(?:al)?|type|name|time-?out)[ _]?error\b|\b(?:SyntaxError|NameError|TypeError|TimeoutError|infinite loop|never (?:ends|terminates|stops|finishes))\b/i;

// Words a comment uses to point at a mistake; not "error" or "missing" alone, which comments on
// error handling use too.
const POINTS_AT_MISTAKE =
  /\b(?:bugs?|buggy|mistakes?|wrong|incorrect(?:ly)?|oops|typo|should (?:be|have)|forg[eo]t|error(?: here|:)|not (?:defined|declared|updated|incremented)|never (?:updated|incremented|changes?|called)|will (?:fail|crash|raise|throw|hang|loop))\b|\binfinite\b|<--/i;

/** The text after a comment marker on each line of the code (`#`, `//`, `/*`, `--`, `<!--`, `;;`). */
function comments(code: string): string[] {
  const found: string[] = [];
  for (const line of code.split("\n")) {
    const m = /(?:#|\/\/|\/\*|<!--|--|;;)(.*)$/.exec(line);
    if (m && !/^#\s*(?:include|define|if|ifdef|ifndef|endif|pragma|import)\b/.test(line.trim())) {
      found.push(m[1]!);
    }
  }
  return found;
}

/**
 * What in `text` gives the game away, quoted, or undefined. Every answer is held to the words of
 * intent ("deliberately", "on purpose"); the answer with the mistake (`mistake`) also to a comment in
 * its code that points at a mistake at all, and prose that names one of the prompt's five kinds of
 * error. A correction may of course talk about the error it fixes.
 */
export function givesAway(text: string, mistake: boolean): string | undefined {
  const intent = INTENT.exec(text);
  if (intent) return `"${intent[0]}"`;
  if (!mistake) return undefined;
  const blocks = extractCodeBlocks(text);
  let prose = text;
  for (const block of blocks) prose = prose.replace(block.code, "");
  const named = NAMES_THE_ERROR.exec(prose);
  if (named) return `"${named[0]}"`;
  for (const comment of blocks.flatMap((b) => comments(b.code))) {
    const pointer = POINTS_AT_MISTAKE.exec(comment) ?? NAMES_THE_ERROR.exec(comment);
    if (pointer) return `"${pointer[0]}" in the comment "${comment.trim().slice(0, 80)}"`;
  }
  return undefined;
}
