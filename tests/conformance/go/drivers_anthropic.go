package main

// anthropic-sdk-go: messages.New (NewStreaming when the scenario streams). Retries off.
import (
	"context"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

func init() {
	register("go.anthropic", []string{"anthropic"}, func(ctx context.Context, s scenario, base string) result {
		client := anthropic.NewClient(
			option.WithBaseURL(base+"/"), option.WithAPIKey(anthropicKey),
			option.WithMaxRetries(0), option.WithRequestTimeout(timeout),
		)
		params := anthropic.MessageNewParams{
			Model:     anthropic.Model(anthropicModel),
			MaxTokens: 64,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
		}
		if s.Stream {
			stream := client.Messages.NewStreaming(ctx, params)
			defer stream.Close()
			for stream.Next() {
			}
			return result{err: stream.Err()}
		}
		_, err := client.Messages.New(ctx, params)
		return result{err: err}
	})
}
