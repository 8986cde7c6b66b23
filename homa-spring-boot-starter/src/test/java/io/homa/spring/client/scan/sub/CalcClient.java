package io.homa.spring.client.scan.sub;

import io.homa.spring.client.HomaExchange;
import reactor.core.publisher.Mono;

@HomaExchange(service = "Calc")
public interface CalcClient {

    Mono<Integer> add(int left, int right);
}
