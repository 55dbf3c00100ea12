// BibTeX for the card's citation block: the paper whose method the release follows, and each source
// dataset the release was made from. Sources without a paper (hub datasets published on their own) are
// cited as the dataset at the commit that was used.

/** OpenCodeInterpreter (Zheng et al., 2024), which built Code-Feedback. */
export const PAPER_BIBTEX = `@article{zheng2024opencodeinterpreter,
  title   = {OpenCodeInterpreter: Integrating Code Generation with Execution and Refinement},
  author  = {Zheng, Tianyu and Zhang, Ge and Shen, Tianhao and Liu, Xueling and Lin, Bill Yuchen and Fu, Jie and Chen, Wenhu and Yue, Xiang},
  journal = {arXiv preprint arXiv:2402.14658},
  year    = {2024}
}`;

const MAGICODER = `@article{wei2023magicoder,
  title   = {Magicoder: Source Code Is All You Need},
  author  = {Wei, Yuxiang and Wang, Zhe and Liu, Jiawei and Ding, Yifeng and Zhang, Lingming},
  journal = {arXiv preprint arXiv:2312.02120},
  year    = {2023}
}`;

const WIZARDCODER = `@article{luo2023wizardcoder,
  title   = {WizardCoder: Empowering Code Large Language Models with Evol-Instruct},
  author  = {Luo, Ziyang and Xu, Can and Zhao, Pu and Sun, Qingfeng and Geng, Xiubo and Hu, Wenxiang and Tao, Chongyang and Ma, Jing and Lin, Qingwei and Jiang, Daxin},
  journal = {arXiv preprint arXiv:2306.08568},
  year    = {2023}
}`;

const TACO = `@article{li2023taco,
  title   = {TACO: Topics in Algorithmic COde generation dataset},
  author  = {Li, Rongao and Fu, Jie and Zhang, Bo-Wen and Huang, Tao and Sun, Zhihong and Lyu, Chen and Liu, Guang and Jin, Zhi and Li, Ge},
  journal = {arXiv preprint arXiv:2312.14852},
  year    = {2023}
}`;

/** Papers behind the paper's sources, by hub repo. Evol-Instruct-Code-80k reproduces WizardCoder's method. */
const SOURCE_PAPERS: Record<string, string> = {
  "ise-uiuc/Magicoder-OSS-Instruct-75K": MAGICODER,
  "ise-uiuc/Magicoder-Evol-Instruct-110K": MAGICODER,
  "nickrosh/Evol-Instruct-Code-80k-v1": WIZARDCODER,
  "BAAI/TACO": TACO,
};

/** A BibTeX key of letters and digits. */
const keyOf = (repo: string) => repo.toLowerCase().replace(/[^a-z0-9]+/g, "");

/** The hub dataset itself, at the commit used. */
function datasetEntry(repo: string, commit: string | undefined): string {
  const [owner] = repo.split("/");
  return [
    `@misc{${keyOf(repo)},`,
    `  title        = {${repo}},`,
    `  author       = {${owner}},`,
    `  howpublished = {Hugging Face dataset ${repo}${commit ? `, commit ${commit}` : ""}},`,
    `  note         = {https://huggingface.co/datasets/${repo}}`,
    "}",
  ].join("\n");
}

/** The citation block: the paper, then each source's paper (once) or the dataset itself. */
export function citations(
  sources: readonly { repo: string; commits: readonly string[]; path?: string | undefined }[],
): string[] {
  const entries = [PAPER_BIBTEX];
  for (const s of sources) {
    // a local file has no public record to cite
    if (s.path !== undefined) continue;
    const entry = SOURCE_PAPERS[s.repo] ?? datasetEntry(s.repo, s.commits[0]);
    if (!entries.includes(entry)) entries.push(entry);
  }
  return entries;
}
