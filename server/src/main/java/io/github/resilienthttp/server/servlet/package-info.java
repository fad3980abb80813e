/** The guard as a Jakarta Servlet filter (Servlet 6; the container provides the API). */
package io.github.resilienthttp.server.servlet;
