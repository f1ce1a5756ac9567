"""One item per case of cases/shortanswer.jsonl: ask the model (its cassette replays the answer),
then score it and send its record. A wrong answer fails its item; the accuracy gate decides the run."""


def test_short_answer(shortanswer_case, shortanswer):
    completion = shortanswer.model.complete(shortanswer.request(shortanswer_case))
    shortanswer.score(shortanswer_case, completion)
