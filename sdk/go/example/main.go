// The generated Go client (protoc-gen-go and protoc-gen-connect-go, package mailv1) against a running service:
// send an email, schedule one, list the account's emails, and read the events from a cursor until the sent
// email's first event shows.
//
//	npm run clients:go                 # writes sdk/go/gen
//	cd sdk/go && MAILER_API_KEY=mk_... go run ./example
//
// -addr (MAILER_GRPC_URL, default http://127.0.0.1:8081: plain HTTP/2; https:// behind TLS), -protocol (grpc or
// connect; gRPC-Web with grpcweb), -from (MAILER_FROM, an address of a verified domain of the key's account;
// default hello@example.com) and -to (MAILER_TO, default you@example.net) say where and what. It prints one line
// per step: `sent <id>`, `scheduled <id>`, `listed <id> ...`, `event <type> <email id>`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"connectrpc.com/connect"
	mailv1 "mailer.example/sdk/go/gen/mail/v1"
	"mailer.example/sdk/go/gen/mail/v1/mailv1connect"
)

func main() {
	addr := flag.String("addr", env("MAILER_GRPC_URL", "http://127.0.0.1:8081"), "the service's gRPC port, as a URL")
	protocol := flag.String("protocol", "grpc", "grpc, connect or grpcweb")
	from := flag.String("from", env("MAILER_FROM", "hello@example.com"), "the sender")
	to := flag.String("to", env("MAILER_TO", "you@example.net"), "the recipient")
	flag.Parse()
	key := os.Getenv("MAILER_API_KEY")
	if key == "" {
		fail(errors.New("MAILER_API_KEY is not set"))
	}

	var opts []connect.ClientOption
	switch *protocol {
	case "grpc":
		opts = append(opts, connect.WithGRPC())
	case "grpcweb":
		opts = append(opts, connect.WithGRPCWeb())
	case "connect":
	default:
		fail(fmt.Errorf("-protocol %q: grpc, connect or grpcweb", *protocol))
	}
	emails := mailv1connect.NewEmailServiceClient(httpClient(*addr), *addr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	sent, err := emails.SendEmail(ctx, withKey(key, &mailv1.SendEmailRequest{
		From: *from, To: []string{*to}, Subject: "Hello", Text: "It works.",
	}))
	if err != nil {
		fail(err)
	}
	fmt.Println("sent", sent.Msg.Id)

	scheduled, err := emails.ScheduleEmail(ctx, withKey(key, &mailv1.ScheduleEmailRequest{
		From: *from, To: []string{*to}, Subject: "Later", Html: "<p>An hour later.</p>",
		ScheduledAt: time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
	}))
	if err != nil {
		fail(err)
	}
	fmt.Println("scheduled", scheduled.Msg.Id)

	listed, err := emails.ListEmails(ctx, withKey(key, &mailv1.ListEmailsRequest{PageSize: 10}))
	if err != nil {
		fail(err)
	}
	ids := make([]string, 0, len(listed.Msg.Data))
	for _, e := range listed.Msg.Data {
		ids = append(ids, e.Id)
	}
	fmt.Println("listed", strings.Join(ids, " "))

	// Oldest first from a cursor (empty: the beginning); keep next_cursor to read each event once.
	cursor := ""
	for deadline := time.Now().Add(30 * time.Second); ; {
		page, err := emails.ListEvents(ctx, withKey(key, &mailv1.ListEventsRequest{After: cursor, Limit: 100}))
		if err != nil {
			fail(err)
		}
		seen := false
		for _, ev := range page.Msg.Events {
			id := "-"
			if ev.Email != nil {
				id = ev.Email.Id
			}
			seen = seen || id == sent.Msg.Id
			fmt.Println("event", ev.Event, id)
		}
		if page.Msg.NextCursor != "" {
			cursor = page.Msg.NextCursor
		}
		if seen {
			return
		}
		if time.Now().After(deadline) {
			fail(fmt.Errorf("no event of %s within 30 s", sent.Msg.Id))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// withKey wraps a message with the API key, sent with every call as the REST API's Bearer header.
func withKey[T any](key string, msg *T) *connect.Request[T] {
	req := connect.NewRequest(msg)
	req.Header().Set("Authorization", "Bearer "+key)
	return req
}

// httpClient speaks HTTP/2 without TLS (h2c) to an http:// address, as gRPC needs HTTP/2; https:// negotiates it.
func httpClient(addr string) *http.Client {
	if !strings.HasPrefix(addr, "http://") {
		return http.DefaultClient
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &protocols}}
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// fail prints a refusal's code and the spec's message (e.g. invalid_argument: from: ...) and exits.
func fail(err error) {
	if ce := new(connect.Error); errors.As(err, &ce) {
		fmt.Fprintf(os.Stderr, "refused: %s: %s\n", ce.Code(), ce.Message())
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(1)
}
