"""One item per case of cases/shortanswer.jsonl: ask the model (its cassette replays the answer),
then score and report it. A wrong answer fails its item; the accuracy gate decides the run."""


def test_short_answer(shortanswer_case, shortanswer):
    completion = shortanswer.model.complete(shortanswer.request(shortanswer_case))
    shortanswer.report(shortanswer_case, completion)
