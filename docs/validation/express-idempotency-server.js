// Payments behind express-idempotency (VilledeMontreal, npm), as its README shows: the middleware on
// POST routes, the handler returns at once on a hit. One charge per execution, counted at /count.
const express = require('express');
const { idempotency, getSharedIdempotencyService } = require('express-idempotency');
const app = express();
let charges = 0;
app.use(express.json());
app.post('/payments', idempotency(), async (req, res) => {
  if (getSharedIdempotencyService().isHit(req)) return;
  await new Promise((r) => setTimeout(r, 100)); // the charge takes a while: duplicates meet it
  charges += 1;
  res.status(201).json({ id: 'pay_' + charges, amount: req.body.amount });
});
app.get('/count', (req, res) => res.json({ count: charges }));
const server = app.listen(0, '127.0.0.1', () => console.log('PORT ' + server.address().port));
