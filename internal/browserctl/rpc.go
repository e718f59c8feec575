// Package browserctl drives real browsers installed on this machine over
// their remote protocols: Chromium's DevTools protocol (the JSON command
// channel, RPC) and Firefox's WebDriver BiDi (Firefox), for the capture
// of package evidence's fixtures and the end-to-end tests.
package browserctl

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"
)

// RPC is a JSON command channel over a WebSocket: Chromium's DevTools
// protocol and WebDriver BiDi (Firefox) both send {"id", "method",
// "params"} and answer with the same id.
type RPC struct {
	ws      *websocket.Conn
	mu      sync.Mutex
	next    int
	pending map[int]chan reply
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Msg    string          `json:"message"`
}

// DialRPC connects to a browser's WebSocket at url, retrying while it
// does not listen yet.
func DialRPC(url string) (*RPC, error) {
	var ws *websocket.Conn
	var err error
	for range 50 { // the browser may not listen yet
		if ws, err = websocket.Dial(url, "", "http://127.0.0.1/"); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	ws.MaxPayloadBytes = 64 << 20
	c := &RPC{ws: ws, pending: map[int]chan reply{}}
	go c.read()
	return c, nil
}

func (c *RPC) read() {
	for {
		var msg struct {
			ID *int `json:"id"`
			reply
		}
		if err := websocket.JSON.Receive(c.ws, &msg); err != nil {
			c.mu.Lock()
			for id, ch := range c.pending {
				ch <- reply{Msg: "connection closed: " + err.Error()}
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		if msg.ID == nil {
			continue // an event
		}
		c.mu.Lock()
		ch := c.pending[*msg.ID]
		delete(c.pending, *msg.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- msg.reply
		}
	}
}

// Call sends a command (to a CDP session when session is not empty) and
// waits for its answer.
func (c *RPC) Call(session, method string, params any, out any) error {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	if err := websocket.JSON.Send(c.ws, msg); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if len(r.Error) > 0 && string(r.Error) != "null" {
			return fmt.Errorf("%s: %s %s", method, r.Error, r.Msg)
		}
		if r.Result == nil && r.Msg != "" {
			return errors.New(method + ": " + r.Msg)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-time.After(60 * time.Second):
		return errors.New(method + ": no answer in a minute")
	}
}

// Close closes the connection.
func (c *RPC) Close() { c.ws.Close() }

// Listening reads a browser's output until it prints the WebSocket address
// it listens on, and keeps draining it afterwards.
func Listening(out io.Reader, re *regexp.Regexp, log *strings.Builder, mu *sync.Mutex) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			log.WriteString(line + "\n")
			mu.Unlock()
			if m := re.FindStringSubmatch(line); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			return "", errors.New("the browser exited before it listened")
		}
		return u, nil
	case <-time.After(90 * time.Second):
		return "", errors.New("the browser did not listen in 90 s")
	}
}
