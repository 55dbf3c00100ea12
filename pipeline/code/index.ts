// Code in model answers: extraction, language names and detection, entry-point removal.
export { detectLanguage, scoreLanguages } from "./detect.js";
export {
  type CodeBlock,
  definesEntryPoint,
  extractCodeBlocks,
  extractMainCode,
  type MainCodeOptions,
} from "./extract.js";
export {
  canonicalLanguage,
  isProgrammingLanguage,
  LANGUAGE_NAMES,
  type LanguageName,
  languageFromSandboxId,
  sandboxLanguageId,
} from "./languages.js";
export { removeMain, type StrippedCode } from "./strip-main.js";
