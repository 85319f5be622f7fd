package kernel

import (
	"context"
	"encoding/json"
	"fmt"
)

// executeRequest is the content of an execute_request. Pointers tell a
// missing field from false: the protocol's defaults are true.
type executeRequest struct {
	Code            string            `json:"code"`
	Silent          bool              `json:"silent"`
	StoreHistory    *bool             `json:"store_history"`
	UserExpressions map[string]string `json:"user_expressions"`
	AllowStdin      *bool             `json:"allow_stdin"`
	StopOnError     *bool             `json:"stop_on_error"`
}

func orTrue(b *bool) bool { return b == nil || *b }

// execute runs one cell. On IOPub, between the busy and idle that
// handleShell sends: execute_input, then what the cell prints and shows,
// then its result or its error; the execute_reply goes to the shell.
func (k *Kernel) execute(m *message) {
	var req executeRequest
	if err := json.Unmarshal(m.content, &req); err != nil {
		err = fmt.Errorf("%w: execute_request: %v", ErrMessage, err)
		k.log.Printf("shell: %v", err)
		k.replyMalformed(k.shell, m, err)
		return
	}
	store := orTrue(req.StoreHistory) && !req.Silent
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	k.mu.Lock()
	if store {
		k.count++
	}
	n := k.count
	k.parent = m
	k.cancel = cancel
	k.cellDone = ctx.Done()
	k.allowStdin = orTrue(req.AllowStdin)
	k.pendingInput = ""
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.cancel = nil
		k.allowStdin = false
		k.mu.Unlock()
	}()

	if !req.Silent {
		k.publish(m, "execute_input", map[string]any{"code": req.Code, "execution_count": n})
	}
	name := fmt.Sprintf("In[%d]", n)
	if !store {
		name = fmt.Sprintf("<input %d>", k.engine.serial+1)
	}
	out := k.engine.run(ctx, name, req.Code)
	k.flushStreams()

	reply := map[string]any{"execution_count": n}
	var resultText string
	if out.err != nil {
		e := out.err
		k.publish(m, "error", map[string]any{"ename": e.name, "evalue": e.value, "traceback": e.traceback})
		reply["status"] = "error"
		reply["ename"], reply["evalue"], reply["traceback"] = e.name, e.value, e.traceback
	} else {
		if !out.result.IsZero() && !req.Silent {
			data, md := out.result.MIMEBundle()
			resultText, _ = data["text/plain"].(string)
			k.publish(m, "execute_result", map[string]any{"execution_count": n, "data": data, "metadata": md})
		}
		reply["status"] = "ok"
		payload := out.payload
		if payload == nil {
			payload = []any{}
		}
		reply["payload"] = payload
		reply["user_expressions"] = k.userExpressions(ctx, req.UserExpressions)
	}
	if store {
		k.history.add(n, req.Code, resultText)
	}
	// The requests to abort are those queued while the cell ran, taken
	// before its reply goes out: a request sent after the client saw the
	// error is the client's next step, and runs.
	var queued []*message
	if out.err != nil && orTrue(req.StopOnError) {
		queued = k.takeQueued()
	}
	k.reply(k.shell, m, "execute_reply", reply)
	k.abort(queued)
}

// userExpressions evaluates the expressions a frontend asks for after a
// successful cell (variable explorers use them), each shown as a cell
// result would be.
func (k *Kernel) userExpressions(ctx context.Context, exprs map[string]string) map[string]any {
	out := map[string]any{}
	for name, expr := range exprs {
		data, err := k.engine.evalExpr(ctx, expr)
		if err != nil {
			out[name] = map[string]any{"status": "error", "ename": err.name, "evalue": err.value, "traceback": err.traceback}
			continue
		}
		d, md := data.MIMEBundle()
		out[name] = map[string]any{"status": "ok", "data": d, "metadata": md}
	}
	return out
}

// takeQueued empties the shell queue.
func (k *Kernel) takeQueued() []*message {
	var out []*message
	for {
		select {
		case m := <-k.shellQueue:
			out = append(out, m)
		default:
			return out
		}
	}
}

// abort answers the execute requests queued behind a cell that failed with
// "aborted", as a notebook's "run all" expects: the cells after an error
// do not run. Other requests among them are handled as usual.
func (k *Kernel) abort(queued []*message) {
	for _, m := range queued {
		if m.header.MsgType != "execute_request" {
			k.handleShell(m)
			continue
		}
		k.publish(m, "status", map[string]any{"execution_state": "busy"})
		k.mu.Lock()
		n := k.count
		k.mu.Unlock()
		k.reply(k.shell, m, "execute_reply", map[string]any{"status": "aborted", "execution_count": n})
		k.publish(m, "status", map[string]any{"execution_state": "idle"})
	}
}
