// Code in model answers: extraction, language names and detection, entry-point removal.
export { detectLanguage } from "./detect.js";
export { type CodeBlock, extractCodeBlocks, extractMainCode } from "./extract.js";
export {
  canonicalLanguage,
  isProgrammingLanguage,
  type LanguageName,
  sandboxLanguageId,
} from "./languages.js";
export { removeMain } from "./strip-main.js";
