# The refund walk-through over the standard API, with `cargo run -p refund-demo` running in
# another terminal. Paste it one step at a time from the repository root, or run it whole:
# `bash -v examples/refund_approval/walkthrough.sh` shows each step, then its answer.
API=${API:-http://127.0.0.1:8000}
PAYMENTS=${PAYMENTS:-http://127.0.0.1:8001}
. "${TOKENS:-.tenx/refund-demo.env}"   # ALICE asks, CAROL (a support_lead) approves, BOB: tokens
# invoke TOKEN BODY: POST /v1/graph/invoke as the token's user; the answer, then its status.
invoke() {
  curl -s "$API/v1/graph/invoke" -H "authorization: Bearer $1" \
    -H 'content-type: application/json' -d "$2" -w '\nstatus %{http_code}\n'
}

# 1. Any other text gets a plain answer (200): the model says what it can do.
invoke "$ALICE" '{"messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
  "config": {"thread_id": "hello"}}'

# 2. Alice asks for a refund. The scripted model calls issue_refund(order_id: "1042",
#    amount_cents: 5900), which needs an approval: the run pauses (200, no answer yet).
invoke "$ALICE" '{"messages": [{"role": "user", "content": [{"type": "text",
  "text": "Refund order 1042, 59.00"}]}], "config": {"thread_id": "refund-1042"}}'

# 3. Read the open request from the thread's state: its message, its response schema
#    ({"approved": boolean}) and its id, the interrupt_id the answer must name.
curl -s "$API/v1/threads/refund-1042/state" -H "authorization: Bearer $ALICE" \
  | grep -o '"interrupt":{"id":"int_[0-9a-f]*"\|"message":"Approve[^"]*"\|"response_schema":{[^}]*}}'
ID=$(curl -s "$API/v1/threads/refund-1042/state" -H "authorization: Bearer $ALICE" \
  | grep -o 'int_[0-9a-f]\{32\}' | head -n 1)
echo "$ID"

# 4. Nothing has been refunded yet: the stand-in payments service lists no refund.
curl -s "$PAYMENTS/refunds"; echo

# 5. The refusals of seed 003's error table; each records nothing (the thread stays paused).
#    An interrupt_id that is not the open one: 409 INTERRUPT_001.
invoke "$CAROL" '{"resume": {"approved": true}, "interrupt_id": "int_nope",
  "config": {"thread_id": "refund-1042"}}'
#    An answer that breaks the response schema: 422 INTERRUPT_002.
invoke "$CAROL" '{"resume": {"approved": "yes"}, "config": {"thread_id": "refund-1042"}}'
#    A new message to the paused thread: 422 INTERRUPT_004.
invoke "$ALICE" '{"messages": [{"role": "user", "content": [{"type": "text", "text": "hello?"}]}],
  "config": {"thread_id": "refund-1042"}}'
#    Another user's token on this thread: 403.
invoke "$BOB" '{"messages": [{"role": "user", "content": [{"type": "text", "text": "mine now"}]}],
  "config": {"thread_id": "refund-1042"}}'
#    Beyond the seed: the approval names its approvers (role support_lead). Bob, who neither
#    owns the thread nor holds the role, gets D7's 403 (`Not authorized to invoke graph`: a
#    stranger learns nothing about the question); Alice, who asked, gets 403 APPROVER_REFUSED.
invoke "$BOB" '{"resume": {"approved": true}, "interrupt_id": "'"$ID"'",
  "config": {"thread_id": "refund-1042"}}'
invoke "$ALICE" '{"resume": {"approved": true}, "interrupt_id": "'"$ID"'",
  "config": {"thread_id": "refund-1042"}}'

# 6. Carol, a support lead, approves, naming the interrupt: the refund runs and the model
#    answers with the payment service's confirmation (200).
invoke "$CAROL" '{"resume": {"approved": true}, "interrupt_id": "'"$ID"'",
  "config": {"thread_id": "refund-1042"}}'

# 7. The refund happened once, under the tool's idempotency key (the demo's terminal printed
#    one "refunded" line).
curl -s "$PAYMENTS/refunds"; echo

# 8. Approving again is refused, 409 INTERRUPT_003: the thread is no longer paused, and
#    nothing is refunded again.
invoke "$CAROL" '{"resume": {"approved": true}, "interrupt_id": "'"$ID"'",
  "config": {"thread_id": "refund-1042"}}'
curl -s "$PAYMENTS/refunds"; echo

# 9. One run at a time per thread. Pause a second refund, make the stand-in take 8 s over it,
#    approve it in the background and resume the same thread meanwhile: after the demo's 2 s
#    wait (tenx serve's default is 30 s), 409 THREAD_BUSY. Then the approval finishes (200).
invoke "$ALICE" '{"messages": [{"role": "user", "content": [{"type": "text",
  "text": "Refund order 1043, 12.50"}]}], "config": {"thread_id": "refund-1043"}}' > /dev/null
ID2=$(curl -s "$API/v1/threads/refund-1043/state" -H "authorization: Bearer $ALICE" \
  | grep -o 'int_[0-9a-f]\{32\}' | head -n 1)
curl -s "$PAYMENTS/delay-next-refund" -d '{"seconds": 8}'; echo
OUT=$(mktemp)
invoke "$CAROL" '{"resume": {"approved": true}, "interrupt_id": "'"$ID2"'",
  "config": {"thread_id": "refund-1043"}}' > "$OUT" &
sleep 2
invoke "$CAROL" '{"resume": {"approved": true}, "interrupt_id": "'"$ID2"'",
  "config": {"thread_id": "refund-1043"}}'
wait; cat "$OUT"
curl -s "$PAYMENTS/refunds"; echo
