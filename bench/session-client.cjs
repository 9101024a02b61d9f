// autocannon setupClient, loaded in autocannon's worker thread: every connection signs in with the next staff
// session of the list in $BENCH_SESSION_TOKENS (a JSON array of access tokens), so N connections are N sessions.
const { readFileSync } = require("node:fs");

const tokens = JSON.parse(readFileSync(process.env.BENCH_SESSION_TOKENS, "utf8"));
let next = 0;

module.exports = function setupClient(client) {
  client.setHeaders({ authorization: `Bearer ${tokens[next++ % tokens.length]}` });
};
