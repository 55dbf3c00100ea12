// Token counts before the server tells us: for `run --dry-run`, for the tokens/min budget, and for
// servers that answer without `usage`. A rough rule (about 4 characters per token for Latin text,
// one per CJK character) is enough for an estimate; real counts replace it once answered.
import type { ChatMessage } from "./types.js";

// Chat templates add a few tokens per message (role markers, separators).
const PER_MESSAGE_OVERHEAD = 4;

export function estimateTextTokens(text: string): number {
  let wide = 0;
  for (let i = 0; i < text.length; i++) {
    // CJK, kana and hangul: roughly a token per character in common tokenizers.
    if (text.charCodeAt(i) >= 0x2e80) wide++;
  }
  return wide + Math.ceil((text.length - wide) / 4);
}

export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  let total = 3;
  for (const m of messages) total += PER_MESSAGE_OVERHEAD + estimateTextTokens(m.content);
  return total;
}
