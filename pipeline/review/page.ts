// The page's HTML: the list, the record pane and the judging keys' hint. Its style and script are put
// inline, each with the response's nonce, the only ones the Content-Security-Policy lets run.
export function pageHtml(nonce: string, config: string, style: string, script: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>codefeedback review</title>
<style nonce="${nonce}">${style}</style>
</head>
<body>
<header>
  <h1>codefeedback review</h1>
  <label>stage <select id="stage"></select></label>
  <span id="stage-state" class="state"></span>
  <label><input type="radio" name="kind" value="o" checked> outputs</label>
  <label><input type="radio" name="kind" value="r"> rejects</label>
  <label>reviewer <input id="reviewer" size="12"></label>
  <span id="queue-state"></span>
</header>
<p id="notice" hidden></p>
<div id="filters">
  <label>method <select data-filter="method"></select></label>
  <label>language <select data-filter="lang"></select></label>
  <label>verdict <select data-filter="verdict"></select></label>
  <label>gate <select data-filter="gate"></select></label>
  <label>reject reason <select data-filter="reason"></select></label>
  <label>source <select data-filter="source"></select></label>
  <label>text <input id="text" type="search" size="16"></label>
  <label>sort <select id="sort">
    <option value="position">position</option><option value="id">id</option><option value="method">method</option>
    <option value="lang">language</option><option value="verdict">verdict</option>
  </select></label>
</div>
<main>
  <section id="list">
    <p id="counts"></p>
    <table><thead><tr><th>id</th><th>method</th><th>language</th><th>verdict</th><th>gates / reason</th><th>marks</th></tr></thead><tbody id="rows"></tbody></table>
    <p class="pager"><button id="prev" type="button">previous</button> <span id="page"></span> <button id="next" type="button">next</button></p>
  </section>
  <section id="record"><p class="hint">Choose a record. Keys: j / k next and previous, g good, b bad.</p></section>
</main>
<script type="application/json" id="config">${config}</script>
<script nonce="${nonce}">${script}</script>
</body>
</html>
`;
}
