// The benchmark page: runs embedded by `npm run report` (a <script type="application/json"
// id="runs-data">), or files the user opens here; drawn side by side by charts.js.
import { drawRuns } from './charts.js';

const root = document.getElementById('runs');
const embedded = document.getElementById('runs-data');
if (embedded) drawRuns(root, JSON.parse(embedded.textContent));
const input = document.getElementById('files');
input?.addEventListener('change', async () => {
  const runs = [];
  for (const f of input.files) {
    try {
      runs.push({ ...JSON.parse(await f.text()), __file: f.name });
    } catch (e) {
      runs.push({ __file: `${f.name} (not JSON: ${e.message})` });
    }
  }
  drawRuns(root, runs);
});
