package main

// google.golang.org/genai: Models.GenerateContent (GenerateContentStream when the
// scenario streams) on the Gemini API backend, the suite's timeout, no retry options. A
// response that returns (a SAFETY finish reason, a blocked prompt) is described from the
// JSON encoding/json writes of it (genai's own field names).
import (
	"context"
	"net/http"

	"google.golang.org/genai"
)

func init() {
	register("go.genai", []string{"gemini"}, func(ctx context.Context, s scenario, base string) result {
		limit := timeout
		client, err := genai.NewClient(ctx, &genai.ClientConfig{
			APIKey:      geminiKey,
			Backend:     genai.BackendGeminiAPI,
			HTTPClient:  &http.Client{Timeout: timeout},
			HTTPOptions: genai.HTTPOptions{BaseURL: base + "/", APIVersion: "v1beta", Timeout: &limit},
		})
		if err != nil {
			return result{err: err}
		}
		model := s.option("model", geminiModel)
		if s.Stream {
			var responses []*genai.GenerateContentResponse
			for response, err := range client.Models.GenerateContentStream(ctx, model, genai.Text(prompt), nil) {
				if err != nil {
					return result{err: err}
				}
				responses = append(responses, response)
			}
			return returned(responses, nil, "")
		}
		response, err := client.Models.GenerateContent(ctx, model, genai.Text(prompt), nil)
		return returned(response, err, "")
	})
}
