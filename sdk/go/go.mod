// The generated Go client's module: `npm run clients:go` writes its code into gen/ (never committed), and
// example/ uses it; webhook/ (a receiver verifying the service's webhooks) needs only the Standard Webhooks
// library. Copy gen/ into your own module (or regenerate there with your own go_package_prefix).
// Go 1.26 or later: connect v1.21.1 asks for it.
module mailer.example/sdk/go

go 1.26.0

require (
	connectrpc.com/connect v1.21.1
	github.com/standard-webhooks/standard-webhooks/libraries v0.0.1
	google.golang.org/protobuf v1.36.12
)
