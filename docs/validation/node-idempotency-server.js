// Payments behind @node-idempotency/core (mahendraHegde, npm) on Node's http server, wired as its
// README shows (onRequest before the handler, onResponse after); its errors mapped to the statuses
// of the IETF draft its README says it follows: in progress 409, fingerprint mismatch 422, missing 400.
const http = require('http');
const { Idempotency, IdempotencyErrorCodes } = require('@node-idempotency/core');
const { MemoryStorageAdapter } = require('@node-idempotency/storage-adapter-memory');
const idempotency = new Idempotency(new MemoryStorageAdapter(), { enforceIdempotency: false });
const codes = {
  [IdempotencyErrorCodes.REQUEST_IN_PROGRESS]: 409,
  [IdempotencyErrorCodes.IDEMPOTENCY_FINGERPRINT_MISSMATCH]: 422,
  [IdempotencyErrorCodes.IDEMPOTENCY_KEY_MISSING]: 400,
  [IdempotencyErrorCodes.IDEMPOTENCY_KEY_LEN_EXEEDED]: 400,
};
let charges = 0;
const send = (res, status, body) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};
http.createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', async () => {
    if (req.method === 'GET' && req.url === '/count') return send(res, 200, { count: charges });
    const request = { method: req.method, path: req.url, headers: req.headers, body: raw ? JSON.parse(raw) : undefined };
    try {
      const cached = await idempotency.onRequest(request);
      if (cached) return send(res, cached.additional.status, cached.body);
    } catch (e) {
      return send(res, codes[e.code] || 500, { title: e.message, code: e.code });
    }
    await new Promise((r) => setTimeout(r, 100));
    charges += 1;
    const body = { id: 'pay_' + charges, amount: request.body && request.body.amount };
    await idempotency.onResponse(request, { body, additional: { status: 201 } });
    send(res, 201, body);
  });
}).listen(0, '127.0.0.1', function () { console.log('PORT ' + this.address().port); });
