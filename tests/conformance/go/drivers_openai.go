package main

// openai-go: openai.NewClient for api openai, with azure.WithEndpoint for api azure; chat
// completions, streamed when the scenario streams. Retries off, the suite's timeout.
import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/sony/gobreaker/v2"
)

func openaiClient(s scenario, base string) (openai.Client, string) {
	common := []option.RequestOption{option.WithMaxRetries(0), option.WithRequestTimeout(timeout)}
	if s.API == "azure" {
		opts := append([]option.RequestOption{
			azure.WithEndpoint(base, azureAPIVersion), azure.WithAPIKey(azureKey), azure.WithUnsafeAllowHTTP(),
		}, common...)
		return openai.NewClient(opts...), azureDeployment
	}
	opts := append([]option.RequestOption{option.WithBaseURL(base + "/v1/"), option.WithAPIKey(openaiKey)}, common...)
	return openai.NewClient(opts...), openaiModel
}

func openaiCall(ctx context.Context, s scenario, base string) (*openai.ChatCompletion, error) {
	client, model := openaiClient(s, base)
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModel(model),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	}
	if s.Stream {
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		for stream.Next() {
		}
		return nil, stream.Err()
	}
	return client.Chat.Completions.New(ctx, params)
}

// providerBreaker is one gobreaker for the provider, as a runtime keeps one per provider;
// it stays closed (one failure per pair never trips it), so it passes the SDK's error on.
var providerBreaker = gobreaker.NewCircuitBreaker[*openai.ChatCompletion](gobreaker.Settings{
	Name:        "openai",
	ReadyToTrip: func(gobreaker.Counts) bool { return false },
})

func init() {
	register("go.openai", []string{"openai", "azure"}, func(ctx context.Context, s scenario, base string) result {
		_, err := openaiCall(ctx, s, base)
		return result{err: err}
	})
	register("go.gobreaker", []string{"openai", "azure"}, func(ctx context.Context, s scenario, base string) result {
		_, err := providerBreaker.Execute(func() (*openai.ChatCompletion, error) { return openaiCall(ctx, s, base) })
		return result{err: err}
	})
}
