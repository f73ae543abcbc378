package main

// openai-go: openai.NewClient for api openai, with azure.WithEndpoint for api azure; chat
// completions, streamed when the scenario streams. Retries off, the suite's timeout. A
// completion that returns (a finish reason) is described with errorclass.DescribeResponseJSON,
// which reads the SDK's RawJSON() (a stream's chunks, in order).
import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/sony/gobreaker/v2"

	errorclass "github.com/errorclass/classifier/clients/go"
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

// openaiCall returns the completion, or a stream's chunks, as the SDK gives them.
func openaiCall(ctx context.Context, s scenario, base string) (any, error) {
	client, model := openaiClient(s, base)
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModel(model),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	}
	if s.Stream {
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		var chunks []openai.ChatCompletionChunk
		for stream.Next() {
			chunks = append(chunks, stream.Current())
		}
		return chunks, stream.Err()
	}
	return client.Chat.Completions.New(ctx, params)
}

// returned is the result of a call that returned: the descriptor of a response that is a
// failure (a refusal, a filter), or nothing.
func returned(response any, err error, provider string) result {
	if err != nil {
		return result{err: err}
	}
	return result{response: errorclass.DescribeResponseJSON(response, provider)}
}

// providerBreaker is one gobreaker for the provider, as a runtime keeps one per provider;
// it stays closed (one failure per pair never trips it), so it passes the SDK's error on.
var providerBreaker = gobreaker.NewCircuitBreaker[any](gobreaker.Settings{
	Name:        "openai",
	ReadyToTrip: func(gobreaker.Counts) bool { return false },
})

func init() {
	register("go.openai", []string{"openai", "azure"}, func(ctx context.Context, s scenario, base string) result {
		response, err := openaiCall(ctx, s, base)
		return returned(response, err, s.API)
	})
	register("go.gobreaker", []string{"openai", "azure"}, func(ctx context.Context, s scenario, base string) result {
		response, err := providerBreaker.Execute(func() (any, error) { return openaiCall(ctx, s, base) })
		return returned(response, err, s.API)
	})
}
