// Export's part of the run report: the dialogues it released, as the last step of the flow chart, and
// the files it wrote (the page's last section: the release).
import type { StageReport } from "../../pipeline/report/contract.js";
import { table } from "../../pipeline/report/html.js";
import type { ExportSummary } from "./stats.js";

export const exportReport: StageReport<ExportSummary> = {
  flow: (view) => [{ label: "exported dialogues", records: view.summary?.code_feedback.dialogues }],
  sections: [
    {
      id: "export",
      render: (view) => {
        const files = view.summary?.files ?? [];
        if (files.length === 0) return "";
        return `<section id="export"><h2>Exported files</h2>${table(
          ["file", "rows", "bytes"],
          files.map((f) => [f.name, f.rows, f.bytes]),
        )}</section>`;
      },
    },
  ],
};
