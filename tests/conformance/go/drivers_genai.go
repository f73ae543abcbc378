package main

// google.golang.org/genai: Models.GenerateContent (GenerateContentStream when the
// scenario streams) on the Gemini API backend, the suite's timeout, no retry options.
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
			for _, err := range client.Models.GenerateContentStream(ctx, model, genai.Text(prompt), nil) {
				if err != nil {
					return result{err: err}
				}
			}
			return result{}
		}
		_, err = client.Models.GenerateContent(ctx, model, genai.Text(prompt), nil)
		return result{err: err}
	})
}
