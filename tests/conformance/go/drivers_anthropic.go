package main

// anthropic-sdk-go: messages.New (NewStreaming when the scenario streams). Retries off. A
// message that returns (stop_reason refusal) is described from its RawJSON() (a stream's
// events, in order).
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
			var events []anthropic.MessageStreamEventUnion
			for stream.Next() {
				events = append(events, stream.Current())
			}
			return returned(events, stream.Err(), "")
		}
		message, err := client.Messages.New(ctx, params)
		return returned(message, err, "")
	})
}
