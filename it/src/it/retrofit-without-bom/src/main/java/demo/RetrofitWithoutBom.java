package demo;

import io.github.resilienthttp.ResilientHttpClient;
import okhttp3.OkHttpClient;

/** Dies at wrap(): OkHttp 4.12 (from Retrofit 3.0.0) is first on the class path. */
public final class RetrofitWithoutBom {
  public static void main(String[] args) throws Exception {
    System.out.println("okhttp3.OkHttpClient from "
        + OkHttpClient.class.getProtectionDomain().getCodeSource().getLocation());
    ResilientHttpClient client = ResilientHttpClient.wrap(new OkHttpClient()).build();
    System.out.println("REACHED EXECUTE " + client);
  }
}
