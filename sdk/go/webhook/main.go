// A webhook receiver: it verifies each request the service delivers with the Standard Webhooks Go library
// (github.com/standard-webhooks/standard-webhooks/libraries/go: HMAC-SHA256 over id, timestamp and raw body,
// compared in constant time, the timestamp within 5 minutes), answers 204 to a good signature and 400 to any
// other, and prints `verified <event> <email id>` for each verified event (`refused <reason>` otherwise).
//
//	cd sdk/go && MAILER_WEBHOOK_SECRET=whsec_... go run ./webhook -listen 127.0.0.1:8090
//
// MAILER_WEBHOOK_SECRET is the secret that creating the webhook (POST /v1/mail/webhooks) answered once. It prints
// `listening <address>` when it is ready. The service refuses loopback and private webhook URLs unless
// MAILER_WEBHOOK_ALLOW_PRIVATE=1.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// What the receiver reads of an event: its type and, for an email's event, the email's id.
type event struct {
	Event string `json:"event"`
	Email *struct {
		ID string `json:"id"`
	} `json:"email"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8090", "the address to listen on")
	flag.Parse()
	secret := os.Getenv("MAILER_WEBHOOK_SECRET")
	if secret == "" {
		fail(errors.New("MAILER_WEBHOOK_SECRET is not set"))
	}
	// Secrets made before secret rotation existed are base64url after whsec_; the library reads standard base64
	// only, and the same bytes are written with + and / (docs/delivery.md).
	secret = "whsec_" + strings.NewReplacer("-", "+", "_", "/").Replace(strings.TrimPrefix(secret, "whsec_"))
	hook, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		fail(fmt.Errorf("MAILER_WEBHOOK_SECRET: %w", err))
	}

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The signature covers the raw body: read it whole, verify, and only then parse it.
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			refuse(w, err)
			return
		}
		if err := hook.Verify(body, r.Header); err != nil {
			refuse(w, err)
			return
		}
		var e event
		if err := json.Unmarshal(body, &e); err != nil {
			refuse(w, err)
			return
		}
		emailID := "-"
		if e.Email != nil {
			emailID = e.Email.ID
		}
		fmt.Println("verified", e.Event, emailID)
		w.WriteHeader(http.StatusNoContent)
	})

	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		fail(err)
	}
	fmt.Println("listening", listener.Addr())
	fail(http.Serve(listener, handler))
}

// A 400: the service retries a delivery that is not answered 2xx, so a bad signature is never taken for a success.
func refuse(w http.ResponseWriter, err error) {
	fmt.Println("refused", err)
	http.Error(w, "invalid webhook", http.StatusBadRequest)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "webhook:", err)
	os.Exit(1)
}
